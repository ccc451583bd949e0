// Reads the request forms of POST /v1/image (multipart upload, JSON url body, raw image body) into one shape.
import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import type { Multipart } from '@fastify/multipart';
import { ApiError } from '../errors.ts';
import {
  operationsJson,
  validateOperations,
  type Operations,
  type operationsSchema,
} from '../pipeline/operations.ts';
import { isRawImageBody, operationsFromQuery, readRawImageBody } from './raw-image-body.ts';
import { InputBytes, type InputBuffers } from '../input-buffers.ts';
import type { UploadRef } from '../sources/upload.ts';
import type { UrlRef } from '../sources/url.ts';
import {
  emptyImage,
  emptyRawBody,
  fieldTooLong,
  imageAndUrl,
  jsonBodyNotObject,
  missingBoundary,
  moreThanOneImage,
  noImage,
  operationsMissing,
  unexpectedFilePart,
  unreadableMultipart,
  uploadEndedEarly,
  uploadTooLarge,
  urlNotString,
} from './upload-errors.ts';

/** What a request names as its image: an upload, or a url to fetch. */
export type RequestSource = UploadRef | UrlRef;

export interface ImageRequest {
  source: RequestSource;
  operations: Operations;
}

/** How a request's forms are read: the server's operations schema, the upload's limit and the buffers to read into. */
export interface ImageRequestReading {
  schema: ReturnType<typeof operationsSchema>;
  maxUploadBytes: number;
  /** Kept buffers for the upload; the job that reads it gives its buffer back (src/input-buffers.ts). */
  buffers?: InputBuffers;
  /** The account's presets: operations naming one are resolved before validation (src/presets/). */
  resolvePreset?: (value: unknown) => Promise<unknown>;
}

/** Longest `operations` text accepted; real ones are under 200 bytes. */
const MAX_OPERATIONS_BYTES = 16 * 1024;
const MAX_URL_FIELD_BYTES = 8 * 1024;

interface RawParts {
  image?: Buffer;
  url?: string;
  operations?: string;
  partCount?: number;
}

/**
 * Watches the body for the multipart boundary until it appears. busboy reads a body that never contains its
 * boundary as an empty form; that is a malformed body (bad_upload), not a form without an image (no_image).
 */
function watchForBoundary(body: NodeJS.ReadableStream, contentType: string | undefined): () => boolean {
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '');
  // Searched as bytes: a latin1 string of each chunk was a copy of up to 64 kB per upload (BENCHMARKS.md at 3059197, the floor investigation).
  const delimiter = Buffer.from(`--${boundary?.[1] ?? boundary?.[2] ?? ''}`, 'latin1');
  let seen = false;
  let tail = Buffer.alloc(0);
  const onData = (chunk: Buffer) => {
    const acrossChunks = Buffer.concat([tail, chunk.subarray(0, delimiter.length)]);
    if (chunk.includes(delimiter) || acrossChunks.includes(delimiter)) {
      seen = true;
      body.off('data', onData);
    } else {
      // A copy, so the watcher never keeps a whole chunk alive.
      const last = chunk.length >= delimiter.length ? chunk : Buffer.concat([tail, chunk]);
      tail = Buffer.from(last.subarray(-delimiter.length));
    }
  };
  body.on('data', onData);
  return () => {
    body.off('data', onData);
    return seen;
  };
}

type FileStream = NodeJS.ReadableStream & { truncated: boolean };

/**
 * Collects the file part. It stops at busboy's 'limit' event, so an oversized upload is refused while it streams
 * (the connection is then closed) instead of after the client has sent every byte. A body that ends inside the
 * part leaves the file stream open without an event, so the end of the request body is watched too.
 */
function readUpload(
  file: FileStream,
  body: NodeJS.ReadableStream,
  maxBytes: number,
  expectedBytes: number,
  buffers?: InputBuffers,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const part = new InputBytes(expectedBytes, maxBytes, buffers);
    const tooLarge = () => uploadTooLarge(maxBytes);
    const endedEarly = () => reject(uploadEndedEarly());
    let bodyEnded: NodeJS.Immediate | undefined;
    const onBodyEnd = () => {
      bodyEnded = setImmediate(endedEarly);
    };
    file.on('data', (chunk: Buffer) => part.append(chunk));
    file.once('limit', () => reject(tooLarge()));
    file.once('error', reject);
    file.once('close', endedEarly);
    file.once('end', () => {
      body.off('end', onBodyEnd);
      // Neither the file's close after its end nor a body end seen just before it is an early end: left on, they
      // built (and dropped) an error, stack trace and all, on every upload.
      file.off('close', endedEarly);
      clearImmediate(bodyEnded);
      if (file.truncated) reject(tooLarge());
      else resolve(part.bytes());
    });
    if ((body as Readable).readableEnded) onBodyEnd();
    else body.once('end', onBodyEnd);
  });
}

function textField(part: Multipart & { type: 'field' }, limit: number): string {
  if (part.valueTruncated) throw fieldTooLong(part.fieldname, limit);
  return String(part.value);
}

function operationsFromFile(bytes: Buffer): string {
  if (bytes.length > MAX_OPERATIONS_BYTES) throw fieldTooLong('operations', MAX_OPERATIONS_BYTES);
  return bytes.toString('utf8');
}

/** The body's announced length (Content-Length), 0 when it is chunked or not a number. */
function bodyLength(request: FastifyRequest): number {
  const length = Number(request.headers['content-length']);
  return Number.isSafeInteger(length) && length > 0 ? length : 0;
}

async function readMultipart(
  request: FastifyRequest,
  maxUploadBytes: number,
  buffers?: InputBuffers,
): Promise<RawParts> {
  const raw: RawParts = {};
  const boundarySeen = watchForBoundary(request.raw, request.headers['content-type']);
  const parts = request.parts({
    limits: {
      fileSize: maxUploadBytes,
      // The image, plus operations when a client sends it as a Blob.
      files: 2,
      fields: 8,
      parts: 10,
      fieldSize: MAX_OPERATIONS_BYTES,
      headerPairs: 50,
    },
    throwFileSizeLimit: false,
    // An `image` part is the file even when the client sent no filename. An `operations` part labelled
    // application/json is read as raw text too (the plugin would parse it into an object): however a client
    // labels it, operations is the same string.
    isPartAFile: (fieldName: string, contentType: string | undefined, fileName: string | undefined) =>
      fieldName === 'image' ||
      fileName !== undefined ||
      contentType === 'application/octet-stream' ||
      (fieldName === 'operations' && contentType?.toLowerCase().startsWith('application/json') === true),
  } as Parameters<FastifyRequest['parts']>[0]);
  try {
    for await (const part of parts) {
      if (part.type === 'file' && part.fieldname === 'operations') {
        // Browsers send FormData Blobs as file parts (filename "blob"): accept operations that way too.
        raw.operations = operationsFromFile(
          await readUpload(part.file, request.raw, maxUploadBytes, MAX_OPERATIONS_BYTES),
        );
      } else if (part.type === 'file') {
        if (part.fieldname !== 'image') throw unexpectedFilePart(part.fieldname);
        if (raw.image !== undefined) throw moreThanOneImage();
        raw.image = await readUpload(part.file, request.raw, maxUploadBytes, bodyLength(request), buffers);
      } else if (part.fieldname === 'operations') {
        raw.operations = textField(part, MAX_OPERATIONS_BYTES);
      } else if (part.fieldname === 'url') {
        const url = textField(part, MAX_URL_FIELD_BYTES);
        // An empty url field (Swagger's Try-it-out sends one beside the file) is an absent one.
        if (url !== '') raw.url = url;
      }
      raw.partCount = (raw.partCount ?? 0) + 1;
    }
  } catch (err) {
    throw err instanceof ApiError ? err : unreadableMultipart(err);
  }
  const sawBoundary = boundarySeen();
  if (raw.partCount === undefined && !sawBoundary) throw missingBoundary();
  return raw;
}

function readJsonBody(body: unknown): { url?: unknown; operations?: unknown } {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw jsonBodyNotObject();
  return body as { url?: unknown; operations?: unknown };
}

async function decodeOperations(reading: ImageRequestReading, value: unknown): Promise<Operations> {
  if (value === undefined) throw operationsMissing();
  const json = typeof value === 'string' ? operationsJson(value) : value;
  return validateOperations(reading.schema, reading.resolvePreset ? await reading.resolvePreset(json) : json);
}

/** The body's image or url and the operations as sent, with the checks every form shares. */
async function readImageParts(
  request: FastifyRequest,
  { maxUploadBytes, buffers }: ImageRequestReading,
): Promise<{ image: Buffer | undefined; url: unknown; operations: unknown }> {
  let image: Buffer | undefined;
  let url: unknown;
  let operations: unknown;
  if (isRawImageBody(request)) {
    image = await readRawImageBody(request, maxUploadBytes, buffers);
    if (image.length === 0) throw emptyRawBody();
    operations = operationsFromQuery(request);
  } else if (request.isMultipart()) {
    const raw = await readMultipart(request, maxUploadBytes, buffers);
    ({ image, url, operations } = raw);
  } else {
    ({ url, operations } = readJsonBody(request.body));
  }
  if (image !== undefined && url !== undefined) throw imageAndUrl();
  if (image === undefined && url === undefined) throw noImage();
  if (image !== undefined && image.length === 0) throw emptyImage();
  return { image, url, operations };
}

function sourceOf(image: Buffer | undefined, url: unknown): RequestSource {
  if (image !== undefined) return { kind: 'upload', bytes: image };
  if (typeof url !== 'string') throw urlNotString();
  return { kind: 'url', url };
}

/**
 * Reads image or url plus operations; errors: no_image, bad_upload, image_too_large, invalid_operations. An
 * upload (multipart or raw body) is read into a buffer from `reading.buffers`.
 */
export async function readImageRequest(
  request: FastifyRequest,
  reading: ImageRequestReading,
): Promise<ImageRequest> {
  const { image, url, operations } = await readImageParts(request, reading);
  const parsed = await decodeOperations(reading, operations);
  return { source: sourceOf(image, url), operations: parsed };
}

/** The same forms for POST /v1/image/info, where operations are optional (given, they are validated alike). */
export async function readImageProbeRequest(
  request: FastifyRequest,
  reading: ImageRequestReading,
): Promise<{ source: RequestSource; operations: Operations | undefined }> {
  const { image, url, operations } = await readImageParts(request, reading);
  const parsed = operations === undefined ? undefined : await decodeOperations(reading, operations);
  return { source: sourceOf(image, url), operations: parsed };
}
