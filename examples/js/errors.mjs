// Handle an error: ImgpipeError carries the status and the code; busy instances are retried for you.
import { readFile } from 'node:fs/promises';
import { ImgpipeClient, ImgpipeError } from '@imgpipe/client';

const imgpipe = new ImgpipeClient({ baseUrl: process.env.IMGPIPE_URL, apiKey: process.env.IMGPIPE_KEY });
try {
  await imgpipe.processImage({ file: await readFile(process.argv[2]), operations: { format: 'jpg' } });
} catch (err) {
  if (!(err instanceof ImgpipeError)) throw err;
  console.log(`${err.code}: ${err.message}`);
  if (err.code === 'quota_exceeded') console.log(`upgrade at ${err.body.upgrade_url}`);
  process.exitCode = 1;
}
