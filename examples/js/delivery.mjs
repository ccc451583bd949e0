// Print a signed delivery URL (400 px wide WebP, valid one hour) for an image URL. Usage: node delivery.mjs https://…
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
