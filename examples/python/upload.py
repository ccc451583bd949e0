# Upload a photo, get an 800 px wide WebP. Usage: IMGPIPE_URL=… IMGPIPE_KEY=… python3 upload.py photo.jpg out.webp
import json
import os
import sys

import requests

base, key = os.environ["IMGPIPE_URL"], os.environ["IMGPIPE_KEY"]
source, target = sys.argv[1], sys.argv[2]
with open(source, "rb") as image:
    res = requests.post(
        f"{base}/v1/image",
        headers={"Authorization": f"Bearer {key}"},
        files={"image": image},
        data={"operations": json.dumps({"resize": {"w": 800}, "format": "webp", "quality": 75})},
        timeout=60,
    )
if not res.ok:  # a failed request answers JSON {"error": {"code", "message"}}, never an image
    error = res.json()["error"]
    sys.exit(f"{error['code']}: {error['message']}")
with open(target, "wb") as out:
    out.write(res.content)
print(res.headers["X-Service-Output-Width"], res.headers["X-Service-Output-Height"], res.headers["X-Service-Quota-Remaining"])
