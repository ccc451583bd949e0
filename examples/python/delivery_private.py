# Private images: print a signed delivery URL (400 px wide WebP) that expires in one hour, for an image only a
# signed-in user may see. Each render makes a new URL, so caches cannot share it.
# Usage: IMGPIPE_URL=… IMGPIPE_ACCOUNT=… IMGPIPE_DELIVERY_SECRET=… python3 delivery_private.py https://example.com/a.jpg
import base64
import hashlib
import hmac
import os
import sys
import time
from urllib.parse import quote

base, account, secret = (os.environ[k] for k in ("IMGPIPE_URL", "IMGPIPE_ACCOUNT", "IMGPIPE_DELIVERY_SECRET"))
signed = f"w:400/f:webp/exp:{int(time.time()) + 3600}/{quote(sys.argv[1], safe='')}"
mac = hmac.new(secret.encode(), signed.encode(), hashlib.sha256).digest()
signature = base64.urlsafe_b64encode(mac).rstrip(b"=").decode()
print(f"{base}/v1/u/{account}/{signature}/{signed}")
