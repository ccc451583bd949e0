// owns: the raw-body form of the image endpoints (the image as the whole body, operations in ?operations=).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { rawBodyEndedEarly, repeatedOperationsQuery, uploadTooLarge } from './upload-errors.ts';
import { InputBytes, type InputBuffers } from '../input-buffers.ts';

/** The media types read as a raw image body: any image/* (the sniffer decides what it is) and octet-stream. */
const RAW_IMAGE_TYPE = /^(image\/[\w.+-]+|application\/octet-stream)$/i;

/** True when the request's Content-Type says the body is the image itself. */
export function isRawImageBody(request: FastifyRequest): boolean {
  const mediaType = (request.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '';
  return RAW_IMAGE_TYPE.test(mediaType);
}

/**
 * Leaves raw image bodies unread by Fastify: the handler streams them itself after auth and the quota check,
 * under MAX_UPLOAD_BYTES, like the multipart file part.
 */
export function acceptRawImageBodies(app: FastifyInstance): void {
  for (const type of ['application/octet-stream', /^image\/[\w.+-]+$/i]) {
    app.addContentTypeParser(type, (_request, _payload, done) => done(null));
  }
}

/**
 * `?operations=` of a raw-body request: the text as sent, or undefined when absent (then the same 400 as a form
 * without the field). Given twice it is refused rather than one of them picked.
 */
export function operationsFromQuery(request: FastifyRequest): string | undefined {
  const value = (request.query as Record<string, unknown> | undefined)?.operations;
  if (Array.isArray(value)) throw repeatedOperationsQuery();
  return typeof value === 'string' ? value : undefined;
}

/**
 * Reads the whole body into one buffer. An announced Content-Length over `maxBytes` is refused before a byte is
 * read, a body that grows past it while streaming too (413, connection closed); a body that stops early is
 * bad_upload.
 */
export function readRawImageBody(
  request: FastifyRequest,
  maxBytes: number,
  buffers?: InputBuffers,
): Promise<Buffer> {
  const body = request.raw;
  const announced = Number(request.headers['content-length']);
  if (Number.isSafeInteger(announced) && announced > maxBytes)
    return Promise.reject(uploadTooLarge(maxBytes));
  return new Promise((resolve, reject) => {
    const upload = new InputBytes(
      Number.isSafeInteger(announced) && announced > 0 ? announced : 64 * 1024,
      maxBytes,
      buffers,
    );
    const stop = (err: Error) => {
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('close', onClose);
      body.off('error', onClose);
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      if (upload.size + chunk.length > maxBytes) {
        stop(uploadTooLarge(maxBytes));
        return;
      }
      upload.append(chunk);
    };
    const onEnd = () => {
      body.off('close', onClose);
      body.off('error', onClose);
      resolve(upload.bytes());
    };
    const onClose = () => stop(rawBodyEndedEarly());
    if (body.readableEnded) {
      resolve(Buffer.alloc(0));
      return;
    }
    body.on('data', onData);
    body.once('end', onEnd);
    body.once('close', onClose);
    body.once('error', onClose);
  });
}
