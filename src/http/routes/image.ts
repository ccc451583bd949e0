// POST /v1/image: auth → reserve a quota unit → read the request and its source → run the job → answer with headers.
import type { FastifyInstance } from 'fastify';
import { takeQuotaUnit } from '../../accounts/quota-unit.ts';
import type { AppContext } from '../../context.ts';
import { runImageJob } from '../../pipeline/run.ts';
import { accountOf, requireApiKey } from '../auth.ts';
import { readImageRequest } from '../image-request.ts';
import { createUploadBuffers, FIRST_BUFFER_CAP } from '../upload-buffers.ts';
import { sourceBytes } from '../image-source.ts';
import { settleWithResponse } from '../unit-settlement.ts';
import { methodNotAllowed } from '../request-errors.ts';
import { IMAGE_SCHEMA } from '../openapi-image.ts';
import { acceptRawImageBodies } from '../raw-image-body.ts';

export async function imageRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  const { config } = ctx;
  // One buffer per job slot is enough for a steady stream of uploads; larger ones are not kept.
  const uploads = createUploadBuffers(config.maxConcurrentJobs, FIRST_BUFFER_CAP);

  app.post(
    '/v1/image',
    { onRequest: requireApiKey(ctx), config: { badBodyCode: 'bad_upload' }, schema: IMAGE_SCHEMA },
    async (request, reply) => {
      const unit = await takeQuotaUnit(ctx, accountOf(request));
      const response = settleWithResponse(reply, unit, ctx.log);
      try {
        const { source, operations } = await readImageRequest(
          request,
          ctx.operations,
          config.maxUploadBytes,
          uploads,
        );
        const input = await sourceBytes(ctx, source, { holder: accountOf(request).accountId, free: false });
        ctx.metrics.recordInputBytes(source.kind, input.length);
        // The answer is sharp's own output, never the upload (multipart or raw body), so the upload is free once the
        // job has stopped.
        const inputFree = source.kind === 'upload' ? () => uploads.give(input) : undefined;
        const out = await runImageJob(ctx, input, operations, response.clientGone, inputFree);
        reply.outputFormat = out.format;
        return reply
          .type(`image/${out.format}`)
          .headers({
            'X-Service-Output-Format': out.format,
            'X-Service-Output-Bytes': out.data.length,
            'X-Service-Output-Width': out.width,
            'X-Service-Output-Height': out.height,
            'X-Service-Output-Frames': out.frames,
            'X-Service-Operations': out.applied.join(','),
            'X-Service-Quota-Limit': unit.limit,
            'X-Service-Quota-Remaining': unit.remaining,
            ...(out.qualityScore === undefined ? {} : { 'X-Service-Quality-Score': out.qualityScore }),
            ...(out.maxBytesMet === undefined ? {} : { 'X-Service-Max-Bytes-Met': String(out.maxBytesMet) }),
          })
          .send(out.data);
      } catch (err) {
        await response.refund();
        throw err;
      }
    },
  );

  // A browser or a typo'd client: the method is what is wrong, so say which one works.
  app.route({
    method: ['GET', 'PUT', 'PATCH', 'DELETE'],
    url: '/v1/image',
    handler: async () => {
      throw methodNotAllowed('POST', 'POST /v1/image with an image (multipart) or a url (JSON)');
    },
  });

  // Without a text/plain parser, a body that is neither multipart nor JSON is an unsupported media type, which the
  // error handler answers with this route's bad-body code (bad_upload), as JSON like every other error.
  app.removeContentTypeParser('text/plain');
  acceptRawImageBodies(app);
}

declare module 'fastify' {
  interface FastifyReply {
    /** Output format written, for the request log and metrics. */
    outputFormat?: string;
  }
}
