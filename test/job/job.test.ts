// The image job's rules (src/job/index.ts) through a real context: its phases, its charge, and sources as units.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../src/errors.ts';
import { runJob, type Charge, type JobRequest } from '../../src/job/index.ts';
import type { ProcessedImage } from '../../src/pipeline/process.ts';
import { SOURCES } from '../../src/sources/index.ts';
import type { ImageSource } from '../../src/sources/source.ts';
import { buildTestApp } from '../helpers/app.ts';
import { corpus } from '../helpers/corpus.ts';

/** A charge that records what the job settled: `made` with the image, `failed` with the error. */
function recordingCharge(): Charge & { settled: string[] } {
  const settled: string[] = [];
  return {
    settled,
    reserve: async () => {
      settled.push('reserved');
      return {
        made: async (image: ProcessedImage) => void settled.push(`made ${image.format}`),
        failed: async (err: unknown) => {
          settled.push(`failed ${(err as ApiError).code}`);
          return err;
        },
      };
    },
  };
}

/** A test's own source: corpus images by name, one file's worth of code. */
interface CorpusRef {
  kind: 'corpus';
  name: string;
}

const corpusSource: ImageSource<CorpusRef> = {
  kind: 'corpus',
  maxBytes: () => 1024 * 1024,
  cost: 'nothing',
  read: async (ref) => corpus(ref.name),
};

const signal = new AbortController().signal;

test('job: a source is one file and one line: added to the list, the job reads it like the built-in ones', async (t) => {
  const { ctx } = await buildTestApp(t);
  const charge = recordingCharge();
  const source: CorpusRef = { kind: 'corpus', name: 'hopper.jpg' };
  const { image } = await runJob(
    { ...ctx, sources: [...SOURCES, corpusSource] },
    { account: 'a', charge, request: () => ({ source, operations: { format: 'webp' } }), signal },
  );
  assert.equal(image.format, 'webp');
  assert.deepEqual(charge.settled, ['reserved', 'made webp']);
  const metrics = await ctx.metrics.registry.metrics();
  assert.match(metrics, /imgpipe_input_bytes_total\{source="corpus"\} \d+/, 'its kind is its metrics label');
});

test('job: operations naming an unknown overlay are refused before the source is read, and the charge given back', async (t) => {
  const { ctx } = await buildTestApp(t);
  const charge = recordingCharge();
  let read = 0;
  const counted: ImageSource<CorpusRef> = {
    ...corpusSource,
    read: async (ref) => (read++, corpus(ref.name)),
  };
  const source: CorpusRef = { kind: 'corpus', name: 'hopper.jpg' };
  const request: JobRequest = { source, operations: { overlay: { name: 'absent' } } };
  await assert.rejects(
    runJob(
      { ...ctx, sources: [...SOURCES, counted] },
      { account: 'a', charge, request: () => request, signal },
    ),
    (err: ApiError) => err.code === 'invalid_operations',
  );
  assert.equal(read, 0);
  assert.deepEqual(charge.settled, ['reserved', 'failed invalid_operations']);
});

test('job: nothing is read before the charge is reserved, and a refused reservation reads nothing', async (t) => {
  const { ctx } = await buildTestApp(t);
  let asked = false;
  const refused: Charge = {
    reserve: async () => {
      throw new ApiError(429, 'quota_exceeded', 'no unit left');
    },
  };
  await assert.rejects(
    runJob(ctx, {
      account: 'a',
      charge: refused,
      request: () => {
        asked = true;
        return { source: { kind: 'upload', bytes: corpus('hopper.jpg') }, operations: {} };
      },
      signal,
    }),
    (err: ApiError) => err.code === 'quota_exceeded',
  );
  assert.equal(asked, false);
});

test('job: a result the charge refuses when made is given back like any failure', async (t) => {
  const { ctx } = await buildTestApp(t);
  const settled: string[] = [];
  const refusesLarge: Charge = {
    reserve: async () => ({
      made: async () => {
        throw new ApiError(413, 'image_too_large', 'larger than the cache keeps');
      },
      failed: async (err) => {
        settled.push(`failed ${(err as ApiError).code}`);
        return err;
      },
    }),
  };
  await assert.rejects(
    runJob(ctx, {
      account: 'a',
      charge: refusesLarge,
      request: () => ({ source: { kind: 'upload', bytes: corpus('hopper.jpg') }, operations: {} }),
      signal,
    }),
    (err: ApiError) => err.code === 'image_too_large',
  );
  assert.deepEqual(settled, ['failed image_too_large']);
});
