// Make an 800 px WebP with its placeholder, and page.html that paints the placeholder (the dominant colour, then the
// ThumbHash decoded by the server's /thumbhash.js), then the image.
// Usage: IMGPIPE_URL=… IMGPIPE_KEY=… node placeholder.mjs photo.jpg out.webp page.html
import { readFile, writeFile } from 'node:fs/promises';
import { ImgpipeClient } from '@imgpipe/client';

const imgpipe = new ImgpipeClient({ baseUrl: process.env.IMGPIPE_URL, apiKey: process.env.IMGPIPE_KEY });
const [input, output, page] = process.argv.slice(2);
const { bytes, headers } = await imgpipe.processImage({
  file: await readFile(input),
  filename: input,
  operations: { resize: { w: 800 }, format: 'webp', placeholder: true },
});
await writeFile(output, bytes);
const { thumbHash, dominantColor } = headers.placeholder;
const { outputWidth: width, outputHeight: height } = headers;
await writeFile(
  page,
  `<!doctype html>
<div id="image" style="width:${width}px;aspect-ratio:${width}/${height};background:${dominantColor} center/cover"></div>
<script type="module">
  import { thumbHashToDataURL } from '${process.env.IMGPIPE_URL}/thumbhash.js';
  const box = document.getElementById('image');
  const hash = Uint8Array.from(atob('${thumbHash}'), (c) => c.charCodeAt(0));
  box.style.backgroundImage = 'url(' + thumbHashToDataURL(hash) + ')';
  const image = new Image();
  image.onload = () => box.replaceWith(image);
  image.src = '${output}';
</script>
`,
);
console.log(`placeholder ${thumbHash} ${dominantColor}`);
