// Print a stable signed delivery URL (400 px wide WebP) for an image URL: the same URL on every page render, so
// browsers and CDNs reuse it. Give a version when the image changes. Usage: node delivery.mjs https://… [version]
import { deliveryUrl } from '@imgpipe/client';

const { IMGPIPE_URL, IMGPIPE_ACCOUNT, IMGPIPE_DELIVERY_SECRET } = process.env;
const url = await deliveryUrl(process.argv[2], {
  baseUrl: IMGPIPE_URL,
  accountId: IMGPIPE_ACCOUNT,
  secret: IMGPIPE_DELIVERY_SECRET,
  width: 400,
  format: 'webp',
  version: process.argv[3],
});
console.log(url);
