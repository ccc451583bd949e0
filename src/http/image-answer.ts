// owns: the answer of an image (POST /v1/image's and a delivery URL's): its X-Service-* headers, written by one
// function and documented once.
import type { FastifyReply } from 'fastify';
import { OUTPUT_FORMATS } from '../pipeline/formats.ts';
import type { ProcessedImage } from '../pipeline/process.ts';
import { OPERATION_TOKENS } from '../pipeline/registry.ts';
import { header, type Headers } from './openapi.ts';

/** The X-Service-* headers of every image answer, here and on delivery URLs. */
export const OUTPUT_HEADERS: Headers = {
  'X-Service-Output-Format': header('string', 'Format actually written.', { enum: OUTPUT_FORMATS }),
  'X-Service-Output-Bytes': header('integer', 'Response body size in bytes.'),
  'X-Service-Output-Width': header(
    'integer',
    'Width of the returned image in pixels (a resize never enlarges, so it may be less than asked).',
  ),
  'X-Service-Output-Height': header('integer', 'Height of the returned image in pixels.'),
  'X-Service-Operations': header(
    'string',
    `Operations run, in pipeline order, each as its name or name=value: ${OPERATION_TOKENS.join(', ')}.`,
    { example: 'resize,format=webp,quality=80,strip' },
  ),
};

/** The headers of `placeholder: true`, as the OpenAPI document shows them. */
export const PLACEHOLDER_HEADERS: Headers = {
  'X-Service-Placeholder': header(
    'string',
    'Only with placeholder true: a ThumbHash of the output, base64 (decode it with any ThumbHash library).',
  ),
  'X-Service-Dominant-Color': header(
    'string',
    'Only with placeholder true: the mean colour of the output, #rrggbb.',
    { example: '#7f787f' },
  ),
};

/** What every image answer says: the output's facts, which a delivery URL's cache keeps. */
export type OutputFacts = Pick<
  ProcessedImage,
  'data' | 'format' | 'width' | 'height' | 'applied' | 'placeholder'
>;

/** What a job's own answer (POST /v1/image) says besides: a delivery URL's cached answer has none of it. */
export type JobFacts = Pick<ProcessedImage, 'frames' | 'qualityScore' | 'maxBytesMet'> & {
  quota: { limit: number; remaining: number };
};

/** Sends the image with its X-Service-* headers; `job` adds the frames, quota and search's. */
export function sendImage(reply: FastifyReply, image: OutputFacts, job?: JobFacts): FastifyReply {
  reply.outputFormat = image.format;
  return reply
    .type(`image/${image.format}`)
    .headers({
      'X-Service-Output-Format': image.format,
      'X-Service-Output-Bytes': image.data.length,
      'X-Service-Output-Width': image.width,
      'X-Service-Output-Height': image.height,
      ...(job && { 'X-Service-Output-Frames': job.frames }),
      'X-Service-Operations': image.applied.join(','),
      ...(job && {
        'X-Service-Quota-Limit': job.quota.limit,
        'X-Service-Quota-Remaining': job.quota.remaining,
      }),
      ...(job?.qualityScore === undefined ? {} : { 'X-Service-Quality-Score': job.qualityScore }),
      ...(job?.maxBytesMet === undefined ? {} : { 'X-Service-Max-Bytes-Met': String(job.maxBytesMet) }),
      ...(image.placeholder && {
        'X-Service-Placeholder': image.placeholder.thumbHash,
        'X-Service-Dominant-Color': image.placeholder.dominantColor,
      }),
    })
    .send(image.data);
}

declare module 'fastify' {
  interface FastifyReply {
    /** Output format written, for the request log and metrics. */
    outputFormat?: string;
  }
}
