#!/usr/bin/env bash
# Make an 800 px WebP with its placeholder, and page.html that paints the placeholder (the dominant colour, then the
# ThumbHash decoded by the server's /thumbhash.js), then the image.
# Usage: IMGPIPE_URL=… IMGPIPE_KEY=… placeholder.sh photo.jpg out.webp page.html
set -euo pipefail
headers=$(curl -sS --fail-with-body \
  -H "Authorization: Bearer $IMGPIPE_KEY" \
  -F "image=@$1" \
  -F 'operations={"resize":{"w":800},"format":"webp","placeholder":true}' \
  -D - -o "$2" \
  "$IMGPIPE_URL/v1/image")
header() { printf '%s\n' "$headers" | grep -i "^$1:" | cut -d' ' -f2 | tr -d '\r'; }
cat >"$3" <<HTML
<!doctype html>
<div id="image" style="width:$(header x-service-output-width)px;aspect-ratio:$(header x-service-output-width)/$(header x-service-output-height);background:$(header x-service-dominant-color) center/cover"></div>
<script type="module">
  import { thumbHashToDataURL } from '$IMGPIPE_URL/thumbhash.js';
  const box = document.getElementById('image');
  const hash = Uint8Array.from(atob('$(header x-service-placeholder)'), (c) => c.charCodeAt(0));
  box.style.backgroundImage = 'url(' + thumbHashToDataURL(hash) + ')';
  const image = new Image();
  image.onload = () => box.replaceWith(image);
  image.src = '$2';
</script>
HTML
echo "placeholder $(header x-service-placeholder) $(header x-service-dominant-color)"
