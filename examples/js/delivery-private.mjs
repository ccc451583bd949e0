// Private images: print a signed delivery URL (400 px wide WebP) that expires in one hour, for an image only a
// signed-in user may see. Each render makes a new URL, so caches cannot share it. Usage: node delivery-private.mjs https://…
import { deliveryUrl } from '@imgpipe/client';

const { IMGPIPE_URL, IMGPIPE_ACCOUNT, IMGPIPE_DELIVERY_SECRET } = process.env;
const url = await deliveryUrl(process.argv[2], {
  baseUrl: IMGPIPE_URL,
  accountId: IMGPIPE_ACCOUNT,
  secret: IMGPIPE_DELIVERY_SECRET,
  width: 400,
  format: 'webp',
  expires: new Date(Date.now() + 3600_000),
});
console.log(url);
