#!/usr/bin/env bash
# Handle an error: the body of a failed request is JSON, never an image. Usage: errors.sh photo.jpg out.jpg
set -uo pipefail
status=$(curl -sS -o "$2" -w '%{http_code}' \
  -H "Authorization: Bearer $IMGPIPE_KEY" \
  -F "image=@$1" -F 'operations={"format":"jpg"}' \
  "$IMGPIPE_URL/v1/image")
if [ "$status" != 200 ]; then
  # {"error":{"code":"invalid_operations","message":"…"}}: print the code and the message, keep no image.
  # The second expression turns JSON's \" and \\ back into " and \; printf ends the line.
  printf '%s\n' "$(sed -E -e 's/.*"code":"([^"]*)","message":"(([^"\\]|\\.)*)".*/\1: \2/' -e 's/\\(["\\/])/\1/g' "$2")"
  rm -f "$2"
  exit 1
fi
