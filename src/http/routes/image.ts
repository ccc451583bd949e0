// POST /v1/image: auth → reserve a quota unit → read input → take a job slot → process → headers.
import type { FastifyInstance, FastifyReply } from 'fastify';
import {
  quotaLimitForTier,
  type QuotaReservation,
  remainingUnits,
  reserveQuotaUnit,
} from '../../accounts/quota.ts';
import type { AppContext } from '../../context.ts';
import { processTimeout } from '../../pipeline/errors.ts';
import { fetchImage } from '../../fetch/guarded-fetch.ts';
import { accountOf, requireApiKey } from '../auth.ts';
import { observeFetch } from '../../metrics.ts';
import { runImageJob } from '../image-job.ts';
import { readImageRequest } from '../image-request.ts';
import { countQuotaUnit } from '../count-quota-unit.ts';
import { methodNotAllowed } from '../request-errors.ts';
import { IMAGE_SCHEMA } from '../openapi-image.ts';
import { acceptRawImageBodies } from '../raw-image-body.ts';

/**
 * Settles the reserved unit exactly once: counted when a 200 was delivered, refunded on an error or when the
 * 200 never reached the client. A unit held by a killed process is refunded by the other instances' sweep
 * (src/accounts/abandoned-units.ts), or at the next start on SQLite (src/main.ts).
 */
function guardReservation(
  ctx: AppContext,
  reply: FastifyReply,
  reservation: QuotaReservation,
  account: { email: string; tier: string },
  clientGone: AbortController,
) {
  const countUnit = () => countQuotaUnit(ctx, reservation, account);
  let settled = false;
  const settle = async (counted: boolean) => {
    if (settled) return;
    settled = true;
    // Refunds go through ctx.refunds, which keeps and retries them while the store is unavailable.
    await (counted ? countUnit() : ctx.refunds.refund(reservation));
  };
  // 'finish' means the whole response was handed to the socket; 'close' without it means the client left.
  let delivered = false;
  reply.raw.once('finish', () => {
    delivered = true;
  });
  reply.raw.once('close', () => {
    if (!delivered) clientGone.abort();
    settle(delivered && reply.statusCode === 200).catch((err: unknown) =>
      ctx.log.error({ err }, 'settling the quota unit failed'),
    );
  });
  return () => settle(false);
}

export async function imageRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  const { config } = ctx;

  app.post(
    '/v1/image',
    { onRequest: requireApiKey(ctx), config: { badBodyCode: 'bad_upload' }, schema: IMAGE_SCHEMA },
    async (request, reply) => {
      const account = accountOf(request);
      const limit = quotaLimitForTier(config, account.tier);
      const reservation = await reserveQuotaUnit(
        ctx.store.db,
        { id: account.accountId, tier: account.tier },
        limit,
        `${config.publicBaseUrl}/pricing`,
        ctx.liveness.id,
      );
      const clientGone = new AbortController();
      const refundOnce = guardReservation(ctx, reply, reservation, account, clientGone);
      try {
        const { source, operations } = await readImageRequest(request, ctx.operations, config.maxUploadBytes);
        const input =
          source.kind === 'upload'
            ? source.bytes
            : await observeFetch(ctx.metrics, fetchImage(ctx, source.url));
        ctx.metrics.recordInputBytes(source.kind, input.length);
        // Work for a client that has gone is never started: its slot would serve nobody.
        if (clientGone.signal.aborted) throw processTimeout('client left');
        const out = await runImageJob(ctx, input, operations, clientGone.signal);
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
            'X-Service-Quota-Limit': limit,
            'X-Service-Quota-Remaining': remainingUnits(limit, reservation.used),
            ...(out.qualityScore === undefined ? {} : { 'X-Service-Quality-Score': out.qualityScore }),
            ...(out.maxBytesMet === undefined ? {} : { 'X-Service-Max-Bytes-Met': String(out.maxBytesMet) }),
          })
          .send(out.data);
      } catch (err) {
        await refundOnce();
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
