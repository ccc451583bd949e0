# Handle an error: a failed request answers JSON {"error": {"code", "message"}}, never an image.
import json
import os
import sys
import time

import requests

base, key = os.environ["IMGPIPE_URL"], os.environ["IMGPIPE_KEY"]
for attempt in range(3):
    with open(sys.argv[1], "rb") as image:
        res = requests.post(
            f"{base}/v1/image",
            headers={"Authorization": f"Bearer {key}"},
            files={"image": image},
            data={"operations": json.dumps({"format": "jpg"})},
            timeout=60,
        )
    if res.status_code == 503:  # busy or fetch_busy: nothing was processed or counted, retry later
        time.sleep(int(res.headers.get("Retry-After", "1")))
        continue
    break
if not res.ok:
    error = res.json()["error"]
    print(f"{error['code']}: {error['message']}")
    sys.exit(1)
