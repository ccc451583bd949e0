// owns: the floor with the service's layers added one at a time, each with the service's own code.
// A variant is "the first N layers of LAYERS"; differences between neighbours telescope to (all layers − floor).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyReply } from 'fastify';
import multipart from '@fastify/multipart';
import { hashApiKey } from '../../src/accounts/api-key.ts';
import {
  confirmQuotaUnit,
  quotaLimitForTier,
  refundQuotaUnit,
  remainingUnits,
  reserveQuotaUnit,
  type QuotaReservation,
} from '../../src/accounts/quota.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger, type AppContext } from '../../src/context.ts';
import { accountOf, requireApiKey } from '../../src/http/auth.ts';
import { registerErrorHandler } from '../../src/http/error-handler.ts';
import { readImageRequest } from '../../src/http/image-request.ts';
import { registerOpenApi } from '../../src/http/openapi.ts';
import { OPENAPI_HEAD } from '../../src/http/routes/docs.ts';
import { documentationOnly } from '../../src/http/image-forms.ts';
import { imageSchema } from '../../src/http/routes/image.ts';
import { requestIdFor, requestLogFields } from '../../src/http/request-id.ts';
import { registerSecurityHeaders } from '../../src/http/security-headers.ts';
import { createMetrics, observeProcessing } from '../../src/metrics.ts';
import { busy } from '../../src/pipeline/errors.ts';
import { createSlotPool } from '../../src/scheduler.ts';
import { operationsSchema, type Operations } from '../../src/pipeline/operations.ts';
import { processImage, type ProcessedImage } from '../../src/pipeline/process.ts';
import { findOrCreateAccount } from '../../src/store/accounts.ts';
import { migrateStore, openStore } from '../../src/store/db.ts';
import { insertApiKeyUnlessActive } from '../../src/store/keys.ts';
import {
  floorLimits,
  readUploadPlain,
  REPLAY,
  replayOr,
  sharpOnce,
  type FloorOutput,
} from './floor-sharp.ts';

/**
 * In the order they are added. fastify: the service's Fastify options, error handler, OpenAPI registration,
 * route schema and X-Request-Id hook. multipart: @fastify/multipart + readImageRequest (zod validation
 * included). auth: requireApiKey on a SQLite store. quota: reserve before reading, confirm (or refund) at the
 * end. pipeline: processImage (sniff, header check, deadline race) under the job limiter instead of the bare
 * sharp call. logging: pino as the service's Fastify logger + the request line. metrics: prom-client with default
 * metrics, the request, input, processing and output series. headers: the X-Service-* and security headers.
 */
export const LAYERS = [
  'fastify',
  'multipart',
  'auth',
  'quota',
  'pipeline',
  'logging',
  'metrics',
  'headers',
] as const;
export type Layer = (typeof LAYERS)[number];

type Output = FloorOutput | ProcessedImage;

/** Serves POST /v1/image with the given layers on 127.0.0.1:port; FLOOR_API_KEY is the key auth accepts. */
export async function startLayeredServer(port: number, layers: ReadonlySet<Layer>): Promise<void> {
  const on = (layer: Layer) => layers.has(layer);
  const config = loadConfig(process.env);
  const limits = floorLimits();
  const schema = operationsSchema(config.maxResizeDimension);
  const jobs = createSlotPool({ max: config.maxConcurrentJobs });
  const metrics = on('metrics') ? createMetrics({ jobs, fetches: createSlotPool({ max: 1 }) }) : undefined;
  const databaseUrl = `sqlite:${join(mkdtempSync(join(tmpdir(), 'imgpipe-floor-')), 'floor.db')}`;
  const store =
    on('auth') || on('quota') ? openStore(databaseUrl, { poolSize: 1, statementTimeoutMs: 5000 }) : undefined;
  if (store) {
    await migrateStore(store.db);
    const account = await findOrCreateAccount(store.db, 'floor@example.com', 'free');
    await insertApiKeyUnlessActive(store.db, account.id, hashApiKey(process.env.FLOOR_API_KEY ?? ''));
  }
  const ctx = { store, liveness: { id: 'floor' } } as unknown as AppContext;

  const log = on('logging') ? createLogger(config) : undefined;
  const app = Fastify({
    ...(log
      ? {
          loggerInstance: log as FastifyBaseLogger,
          logController: new LogController({
            disableRequestLogging: true,
            requestIdLogLabel: 'requestId',
          }),
        }
      : {}),
    trustProxy: false,
    bodyLimit: 1024 * 1024,
    connectionTimeout: 0,
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: 10_000,
    http: { headersTimeout: 20_000, connectionsCheckingInterval: 1_000 },
    forceCloseConnections: 'idle',
    return503OnClosing: false,
    requestIdHeader: false,
    genReqId: requestIdFor,
  });
  registerErrorHandler(app);
  if (on('headers')) registerSecurityHeaders(app);
  await registerOpenApi(app, OPENAPI_HEAD);
  // The service's own hooks, callbacks as in src/http/server.ts.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    if (log?.isLevelEnabled('info')) request.log.info(requestLogFields(request, reply, route), 'request');
    metrics?.recordRequest({
      method: request.method,
      route,
      status: reply.statusCode,
      errorCode: reply.errorCode,
      durationSeconds: reply.elapsedTime / 1000,
    });
    done();
  });

  /** Confirms the unit once the answer went out whole, else refunds it (the service's guardReservation). */
  const settleAtClose = (reply: FastifyReply, reservation: QuotaReservation) => {
    let delivered = false;
    reply.raw.once('finish', () => {
      delivered = true;
    });
    reply.raw.once('close', () => {
      const settling =
        delivered && reply.statusCode === 200
          ? confirmQuotaUnit(ctx.store.db, reservation, () => {
              throw new Error('no warning mail at a quota of 1e9');
            })
          : refundQuotaUnit(ctx.store.db, reservation);
      settling.catch((err: unknown) => console.error(err));
    });
  };

  const processUpload = async (input: Buffer, ops: Operations): Promise<Output> => {
    if (!on('pipeline')) return replayOr(input, () => sharpOnce(input, ops, limits));
    const slot = await jobs.acquire({ account: 'floor', kind: 'job' });
    if ('refused' in slot) throw busy('slots');
    if (REPLAY) return replayOr(input, () => processImage({ input, ops, limits })).finally(slot.release);
    return processImage({ input, ops, limits, onSettled: slot.release });
  };

  await app.register(async (scope) => {
    if (on('multipart')) await scope.register(multipart);
    // Without the plugin, the body stays unread for busboy, as in the floor.
    else scope.addContentTypeParser('multipart/form-data', (_request, _payload, done) => done(null));
    scope.post(
      '/v1/image',
      {
        ...(on('auth') ? { onRequest: requireApiKey(ctx) } : {}),
        config: { badBodyCode: 'bad_upload' },
        schema: imageSchema(schema),
        validatorCompiler: documentationOnly,
      },
      async (request, reply) => {
        let limit = 0;
        let reservation: QuotaReservation | undefined;
        if (on('quota')) {
          const account = accountOf(request);
          limit = quotaLimitForTier(config, account.tier);
          reservation = await reserveQuotaUnit(
            ctx.store.db,
            { id: account.accountId, tier: account.tier },
            limit,
            `${config.publicBaseUrl}/pricing`,
            ctx.liveness.id,
          );
          settleAtClose(reply, reservation);
        }
        let input: Buffer;
        let ops: Operations;
        if (on('multipart')) {
          const { source, operations } = await readImageRequest(request, {
            schema,
            maxUploadBytes: limits.maxUploadBytes,
          });
          if (source.kind !== 'upload') throw new Error('the floor takes uploads only');
          input = source.bytes;
          ops = operations;
        } else {
          const upload = await readUploadPlain(request.raw, limits.maxUploadBytes);
          input = upload.image;
          ops = JSON.parse(upload.operations) as Operations;
        }
        metrics?.recordInputBytes('upload', input.length);
        const out = metrics
          ? await observeProcessing(metrics, ops.format, processUpload(input, ops))
          : await processUpload(input, ops);
        if (on('logging')) reply.outputFormat = out.format;
        reply.type(`image/${out.format}`);
        if (on('headers') && 'applied' in out) {
          reply.headers({
            'X-Service-Output-Format': out.format,
            'X-Service-Output-Bytes': out.data.length,
            'X-Service-Output-Width': out.width,
            'X-Service-Output-Height': out.height,
            'X-Service-Operations': out.applied.join(','),
            'X-Service-Quota-Limit': limit,
            'X-Service-Quota-Remaining': remainingUnits(limit, reservation?.used ?? 0),
          });
        }
        return reply.send(out.data);
      },
    );
  });
  app.get('/healthz', async () => 'ok');
  await app.listen({ port, host: '127.0.0.1' });
  process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
}

/** The first `count` layers, as the FLOOR_LAYERS value a child reads. */
export function firstLayers(count: number): string {
  return LAYERS.slice(0, count).join(',');
}
