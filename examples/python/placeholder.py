# Make an 800 px WebP with its placeholder, and page.html that paints the placeholder (the dominant colour, then the
# ThumbHash decoded by the server's /thumbhash.js), then the image.
# Usage: IMGPIPE_URL=… IMGPIPE_KEY=… python3 placeholder.py photo.jpg out.webp page.html
import json
import os
import sys

import requests

base, key = os.environ["IMGPIPE_URL"], os.environ["IMGPIPE_KEY"]
source, target, page = sys.argv[1], sys.argv[2], sys.argv[3]
with open(source, "rb") as image:
    res = requests.post(
        f"{base}/v1/image",
        headers={"Authorization": f"Bearer {key}"},
        files={"image": image},
        data={"operations": json.dumps({"resize": {"w": 800}, "format": "webp", "placeholder": True})},
        timeout=60,
    )
if not res.ok:  # a failed request answers JSON {"error": {"code", "message"}}, never an image
    error = res.json()["error"]
    sys.exit(f"{error['code']}: {error['message']}")
with open(target, "wb") as out:
    out.write(res.content)
thumb_hash, color = res.headers["X-Service-Placeholder"], res.headers["X-Service-Dominant-Color"]
width, height = res.headers["X-Service-Output-Width"], res.headers["X-Service-Output-Height"]
with open(page, "w") as out:
    out.write(f"""<!doctype html>
<div id="image" style="width:{width}px;aspect-ratio:{width}/{height};background:{color} center/cover"></div>
<script type="module">
  import {{ thumbHashToDataURL }} from '{base}/thumbhash.js';
  const box = document.getElementById('image');
  const hash = Uint8Array.from(atob('{thumb_hash}'), (c) => c.charCodeAt(0));
  box.style.backgroundImage = 'url(' + thumbHashToDataURL(hash) + ')';
  const image = new Image();
  image.onload = () => box.replaceWith(image);
  image.src = '{target}';
</script>
""")
print(f"placeholder {thumb_hash} {color}")
