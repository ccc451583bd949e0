# Print a stable signed delivery URL (400 px wide WebP) for an image URL: the same URL on every page render, so
# browsers and CDNs reuse it. Give a version (v:) when the image changes.
# Usage: IMGPIPE_URL=… IMGPIPE_ACCOUNT=… IMGPIPE_DELIVERY_SECRET=… python3 delivery.py https://example.com/a.jpg [version]
import base64
import hashlib
import hmac
import os
import sys
from urllib.parse import quote

base, account, secret = (os.environ[k] for k in ("IMGPIPE_URL", "IMGPIPE_ACCOUNT", "IMGPIPE_DELIVERY_SECRET"))
version = f"v:{sys.argv[2]}/" if len(sys.argv) > 2 else ""
signed = f"w:400/f:webp/{version}{quote(sys.argv[1], safe='')}"
mac = hmac.new(secret.encode(), signed.encode(), hashlib.sha256).digest()
signature = base64.urlsafe_b64encode(mac).rstrip(b"=").decode()
print(f"{base}/v1/u/{account}/{signature}/{signed}")
