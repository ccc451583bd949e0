// The child process side of the isolated processor: runs one job at a time for the parent, until killed.
import { isApiError } from '../errors.ts';
import type { IsolatedJob, IsolatedResult } from './isolated-processor.ts';
import { processImage } from './process.ts';

process.on('message', (job: IsolatedJob) => {
  const reply = (result: IsolatedResult) => process.send?.(result);
  processImage(Buffer.from(job.input.buffer, job.input.byteOffset, job.input.byteLength), job.ops, job.limits)
    .then((image) => reply({ ok: true, image }))
    .catch((err: unknown) =>
      reply({
        ok: false,
        code: isApiError(err) ? err.code : 'unprocessable_image',
        message: isApiError(err) ? err.message : 'The image could not be processed',
      }),
    );
});
process.send?.({ ready: true });
