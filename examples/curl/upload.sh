#!/usr/bin/env bash
# Upload photo.jpg, get an 800 px wide WebP. Usage: IMGPIPE_URL=… IMGPIPE_KEY=… upload.sh photo.jpg out.webp
set -euo pipefail
curl -sS --fail-with-body \
  -H "Authorization: Bearer $IMGPIPE_KEY" \
  -F "image=@$1" \
  -F 'operations={"resize":{"w":800},"format":"webp","quality":75}' \
  -D - -o "$2" \
  "$IMGPIPE_URL/v1/image" | grep -i '^x-service-output'
