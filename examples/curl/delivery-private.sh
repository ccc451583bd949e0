#!/usr/bin/env bash
# Private images: print a signed delivery URL (400 px wide WebP) that expires in one hour, for an image only a
# signed-in user may see; openssl signs it. Each render makes a new URL, so caches cannot share it.
# Usage: IMGPIPE_URL=… IMGPIPE_ACCOUNT=… IMGPIPE_DELIVERY_SECRET=… delivery-private.sh https://example.com/a.jpg
set -euo pipefail
encode() { # percent-encode every byte but A-Z a-z 0-9 . _ ~ -, as encodeURIComponent does
  local LC_ALL=C s="$1" out="" c i
  for ((i = 0; i < ${#s}; i++)); do
    c=${s:i:1}
    case $c in [A-Za-z0-9._~-]) out+=$c ;; *) printf -v c '%%%02X' "'$c" && out+=$c ;; esac
  done
  printf '%s' "$out"
}
signed="w:400/f:webp/exp:$(($(date +%s) + 3600))/$(encode "$1")"
signature=$(printf '%s' "$signed" | openssl dgst -sha256 -hmac "$IMGPIPE_DELIVERY_SECRET" -binary |
  openssl base64 -A | tr '+/' '-_' | tr -d '=')
echo "$IMGPIPE_URL/v1/u/$IMGPIPE_ACCOUNT/$signature/$signed"
