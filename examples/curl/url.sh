#!/usr/bin/env bash
# Let imgpipe fetch an image by URL, get a 300×300 AVIF thumbnail. Usage: url.sh https://example.com/a.jpg out.avif
set -euo pipefail
curl -sS --fail-with-body \
  -H "Authorization: Bearer $IMGPIPE_KEY" \
  -H 'Content-Type: application/json' \
  -d "{\"url\":\"$1\",\"operations\":{\"resize\":{\"w\":300,\"h\":300,\"fit\":\"cover\"},\"format\":\"avif\"}}" \
  -o "$2" \
  "$IMGPIPE_URL/v1/image"
