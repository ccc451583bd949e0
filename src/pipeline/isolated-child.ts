// The child process side of the isolated processor: runs one job at a time for the parent, until killed, or until
// the parent is gone.
import { isApiError } from '../errors.ts';
import { allowChildDecoding } from './child-decoders.ts';
import type { IsolatedJob, IsolatedResult } from './isolated-processor.ts';
import { processImage } from './process.ts';

// The channel closes when the server dies, even by SIGKILL: no job is worth finishing then. sharp works on libuv's
// pool, so this thread is free to hear it; SIGKILL to itself ends the libvips threads mid-call at once, where exit()
// would first run the process's exit handlers.
// The formats decoded in the children (HEIC) are decoded here and nowhere else: their decoders refuse in any other
// process.
allowChildDecoding();

process.on('disconnect', () => process.kill(process.pid, 'SIGKILL'));

process.on('message', (job: IsolatedJob) => {
  const reply = (result: IsolatedResult) => process.send?.(result);
  const input = Buffer.from(job.input.buffer, job.input.byteOffset, job.input.byteLength);
  processImage({ ...job, input })
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
