// Let imgpipe fetch an image by URL, get a 300×300 AVIF thumbnail. Usage: node url.mjs https://… out.avif
import { writeFile } from 'node:fs/promises';
import { ImgpipeClient } from '@imgpipe/client';

const imgpipe = new ImgpipeClient({ baseUrl: process.env.IMGPIPE_URL, apiKey: process.env.IMGPIPE_KEY });
const [url, output] = process.argv.slice(2);
const { bytes } = await imgpipe.processImage({
  url,
  operations: { resize: { w: 300, h: 300, fit: 'cover' }, format: 'avif' },
});
await writeFile(output, bytes);
