# Let imgpipe fetch an image by URL, get a 300×300 AVIF thumbnail. Usage: python3 url.py https://… out.avif
import os
import sys

import requests

base, key = os.environ["IMGPIPE_URL"], os.environ["IMGPIPE_KEY"]
res = requests.post(
    f"{base}/v1/image",
    headers={"Authorization": f"Bearer {key}"},
    json={"url": sys.argv[1], "operations": {"resize": {"w": 300, "h": 300, "fit": "cover"}, "format": "avif"}},
    timeout=60,
)
if not res.ok:  # a failed request answers JSON {"error": {"code", "message"}}, never an image
    error = res.json()["error"]
    sys.exit(f"{error['code']}: {error['message']}")
with open(sys.argv[2], "wb") as out:
    out.write(res.content)
