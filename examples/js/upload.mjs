// Upload a photo, get an 800 px wide WebP. Usage: IMGPIPE_URL=… IMGPIPE_KEY=… node upload.mjs photo.jpg out.webp
import { readFile, writeFile } from 'node:fs/promises';
import { ImgpipeClient } from '@imgpipe/client';

const imgpipe = new ImgpipeClient({ baseUrl: process.env.IMGPIPE_URL, apiKey: process.env.IMGPIPE_KEY });
const [input, output] = process.argv.slice(2);
const { bytes, headers } = await imgpipe.processImage({
  file: await readFile(input),
  filename: input,
  operations: { resize: { w: 800 }, format: 'webp', quality: 75 },
});
await writeFile(output, bytes);
console.log(
  `${headers.outputWidth}×${headers.outputHeight} ${headers.outputFormat}, ${headers.quotaRemaining} left`,
);
