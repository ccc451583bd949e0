#!/usr/bin/env bash
# Print a stable signed delivery URL (400 px wide WebP) for an image URL; openssl signs it. The same URL on every
# page render, so browsers and CDNs reuse it; give a version (v:) when the image changes.
# Usage: IMGPIPE_URL=… IMGPIPE_ACCOUNT=… IMGPIPE_DELIVERY_SECRET=… delivery.sh https://example.com/a.jpg [version]
set -euo pipefail
encode() { # percent-encode every byte but A-Z a-z 0-9 . _ ~ -, as encodeURIComponent does
  local LC_ALL=C s="$1" out="" c i
  for ((i = 0; i < ${#s}; i++)); do
    c=${s:i:1}
    case $c in [A-Za-z0-9._~-]) out+=$c ;; *) printf -v c '%%%02X' "'$c" && out+=$c ;; esac
  done
  printf '%s' "$out"
}
signed="w:400/f:webp/${2:+v:$2/}$(encode "$1")"
signature=$(printf '%s' "$signed" | openssl dgst -sha256 -hmac "$IMGPIPE_DELIVERY_SECRET" -binary |
  openssl base64 -A | tr '+/' '-_' | tr -d '=')
echo "$IMGPIPE_URL/v1/u/$IMGPIPE_ACCOUNT/$signature/$signed"
