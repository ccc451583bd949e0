// Reads a fetched body as a stream: decodes Content-Encoding and abandons it once the byte cap is passed.
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { ApiError } from '../errors.ts';
import { InputBytes, type InputBuffers } from '../input-buffers.ts';
import { fetchedImageTooLarge, fetchFailed } from './errors.ts';

export interface BodyLimits {
  /** MAX_FETCH_BYTES: the most decoded bytes accepted (and wire bytes, when encoded). */
  cap: number;
  contentEncoding?: string;
  contentLength?: string;
}

const DECODERS: Record<string, () => Transform> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

/**
 * Most codings a Content-Encoding may list. Servers apply one (rarely two); a list of thousands would have the
 * fetch build a decoder chain of thousands on the main thread before reading a byte.
 */
export const MAX_CONTENT_CODINGS = 2;

/** Abandons a body; undici reports its own destruction as an 'error' that nobody needs to hear. */
export function discardBody(body: Readable): void {
  body.on('error', () => undefined);
  body.destroy();
}

/** Decoders in the order they must run: codings are listed in the order they were applied. */
function decodersFor(contentEncoding: string | undefined): Transform[] {
  const codings = (contentEncoding ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '');
  if (codings.length > MAX_CONTENT_CODINGS) {
    throw fetchFailed(
      `the response lists ${codings.length} Content-Encodings; at most ${MAX_CONTENT_CODINGS} are decoded`,
    );
  }
  return codings
    .filter((c) => c !== 'identity')
    .reverse()
    .map((coding) => {
      const make = DECODERS[coding];
      if (!make) throw fetchFailed(`unsupported Content-Encoding "${coding}"`);
      return make();
    });
}

/** Counts encoded bytes: a decoder can swallow input while producing nothing, so the wire is capped too. */
function wireLimit(cap: number, onOverCap: (err: ApiError) => void): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen <= cap) return done(null, chunk);
      const err = fetchedImageTooLarge(cap, 'compressed size');
      onOverCap(err);
      done(err);
    },
  });
}

/**
 * Reads `body` to a Buffer of at most `cap` decoded bytes, or throws image_too_large and destroys it. With `buffers`
 * the bytes go into one of its kept buffers (the caller gives it back when nothing reads the bytes any more).
 */
export async function readCappedBody(
  body: Readable,
  limits: BodyLimits,
  buffers?: InputBuffers,
): Promise<Buffer> {
  const { cap } = limits;
  const declared = Number(limits.contentLength);
  let decoders: Transform[];
  try {
    decoders = decodersFor(limits.contentEncoding);
    if (decoders.length === 0 && Number.isFinite(declared) && declared > cap) {
      throw fetchedImageTooLarge(cap, `Content-Length ${declared}`);
    }
  } catch (err) {
    discardBody(body);
    throw err;
  }
  // Sized from Content-Length only when it counts the bytes that will be kept (no decoder).
  const bytes = new InputBytes(
    decoders.length === 0 && Number.isFinite(declared) ? declared : 0,
    cap,
    buffers,
  );
  // Kept aside: tearing the pipeline down can surface an abort error before this one.
  let overCap: ApiError | undefined;
  const collect = async (source: AsyncIterable<Buffer>) => {
    for await (const chunk of source) {
      if (bytes.size + chunk.length > cap) {
        overCap = fetchedImageTooLarge(cap, decoders.length > 0 ? 'after decoding' : 'streamed');
        throw overCap;
      }
      bytes.append(chunk);
    }
  };
  try {
    if (decoders.length === 0) {
      // The body itself, without a pipeline: its abort controller, error and wrappers cost more CPU than the loop
      // for a small image.
      await collect(body);
    } else {
      const stages = [wireLimit(cap, (err) => (overCap = err)), ...decoders];
      // pipeline's typings have no variadic overload; it accepts any number of transforms at run time.
      await (pipeline as (...streams: unknown[]) => Promise<void>)(body, ...stages, collect);
    }
  } catch (err) {
    discardBody(body);
    if (overCap) throw overCap;
    const code = (err as { code?: string }).code ?? '';
    if (code.startsWith('Z_') || code.startsWith('ERR__ERROR') || code.startsWith('ERR_BROTLI')) {
      throw fetchFailed(`the ${limits.contentEncoding} body could not be decoded`, err);
    }
    throw err;
  }
  return bytes.bytes();
}
