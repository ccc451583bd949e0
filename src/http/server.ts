// owns: the Fastify instance: server timeouts, logging, the error handler and the registration of every route.
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import multipart from '@fastify/multipart';
import fastifyStatic from '@fastify/static';
import type { TrustProxy } from '../config.ts';
import type { AppContext } from '../context.ts';
import { handleClientError, registerErrorHandler, sendFrameworkError } from './error-handler.ts';
import { registerDeliveryCrossOrigin } from './cross-origin.ts';
import { healthRoutes } from './routes/health.ts';
import { imageRoutes } from './routes/image.ts';
import { imageInfoRoutes } from './routes/image-info.ts';
import { signupRoutes } from './routes/signup.ts';
import { keyRoutes } from './routes/keys.ts';
import { accountRoutes } from './routes/account.ts';
import { billingRoutes } from './routes/billing.ts';
import { devBillingRoutes } from './routes/dev-billing.ts';
import { devMailRoutes } from './routes/dev-mail.ts';
import { webhookRoutes } from './routes/webhook.ts';
import { docsRoutes, OPENAPI_HEAD } from './routes/docs.ts';
import { metricsRoutes } from './routes/metrics.ts';
import { playgroundRoutes } from './routes/playground.ts';
import { deliveryRoutes } from './routes/delivery.ts';
import { deliverySettingsRoutes } from './routes/delivery-settings.ts';
import { overlayRoutes } from './routes/overlays.ts';
import { presetRoutes } from './routes/presets.ts';
import { deliveryPolicyRoutes } from './routes/delivery-policy.ts';
import { registerSecurityHeaders } from './security-headers.ts';
import { STATIC_FILES } from './static-files.ts';
import { registerOpenApi } from './openapi.ts';
import { requestIdFor, requestLogFields } from './request-id.ts';
import { requestHeadProblem } from './request-head.ts';

/**
 * Bounds on slow clients. Headers must arrive within headersTimeout; the whole request (headers and body)
 * within requestTimeout: 10 MB takes 84 s at 1 Mbit/s, so a normal uplink fits. Processing time is not
 * counted (Node measures only the receiving). Idle keep-alive sockets close after keepAliveTimeout. Node
 * checks the first two every connectionsCheckingInterval (default 30 s, too coarse against slowloris).
 */
export const SERVER_TIMEOUTS = {
  headersTimeoutMs: 20_000,
  requestTimeoutMs: 120_000,
  keepAliveTimeoutMs: 10_000,
  connectionsCheckingIntervalMs: 1_000,
};

/** Fastify's types take no hop count, so N hops is the equivalent function: the socket peer is hop 0. */
export function fastifyTrustProxy(
  trust: TrustProxy,
): false | string[] | ((addr: string, hop: number) => boolean) {
  if (typeof trust === 'number') return trust === 0 ? false : (_addr, hop) => hop < trust;
  return trust;
}

export interface BuildServerOptions {
  /** Tests shorten the timeouts to watch them act. */
  timeouts?: Partial<typeof SERVER_TIMEOUTS>;
}

export async function buildServer(
  ctx: AppContext,
  options: BuildServerOptions = {},
): Promise<FastifyInstance> {
  const timeouts = { ...SERVER_TIMEOUTS, requestTimeoutMs: ctx.config.requestTimeoutMs, ...options.timeouts };
  /** The one log line and the metrics of an answer. */
  const recordAnswer = (request: FastifyRequest, reply: FastifyReply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    if (ctx.log.isLevelEnabled('info')) request.log.info(requestLogFields(request, reply, route), 'request');
    ctx.metrics.recordRequest({
      method: request.method,
      route,
      status: reply.statusCode,
      errorCode: reply.errorCode,
      durationSeconds: reply.elapsedTime / 1000,
    });
  };
  const app = Fastify({
    loggerInstance: ctx.log as FastifyBaseLogger,
    // One line per request is written by the onResponse hook below instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    trustProxy: fastifyTrustProxy(ctx.config.trustProxy),
    bodyLimit: 1024 * 1024,
    // No socket inactivity timeout: a response may legitimately take PROCESS_TIMEOUT_MS to start.
    connectionTimeout: 0,
    requestTimeout: timeouts.requestTimeoutMs,
    keepAliveTimeout: timeouts.keepAliveTimeoutMs,
    http: {
      // Node enforces requestTimeout only while headersTimeout is not larger than it.
      headersTimeout: Math.min(timeouts.headersTimeoutMs, timeouts.requestTimeoutMs),
      connectionsCheckingInterval: timeouts.connectionsCheckingIntervalMs,
      // Node would answer a request without Host with a bare 400 of its own; the onRequest hook answers it instead.
      requireHostHeader: false,
    },
    // On close: stop accepting, close idle keep-alive sockets at once, let requests in flight finish.
    clientErrorHandler: handleClientError,
    forceCloseConnections: 'idle',
    // Requests still arriving on a busy keep-alive socket during close are served (with Connection: close)
    // rather than answered by Fastify's own 503 body, which is not the API's error shape.
    return503OnClosing: false,
    requestIdHeader: false,
    genReqId: requestIdFor,
    // A path the router cannot read (`/v1/u/%zz`): Fastify answers it before any hook, so the answer, its
    // headers and its log line are written here.
    frameworkErrors: (err, request, reply) => {
      reply.raw.once('finish', () => recordAnswer(request, reply));
      sendFrameworkError(err, request, reply.header('X-Request-Id', request.id));
    },
  });
  registerErrorHandler(app);
  registerSecurityHeaders(app);
  registerDeliveryCrossOrigin(app);
  // Before any route: the generator collects the schemas routes declare as they are added.
  await registerOpenApi(app, OPENAPI_HEAD);

  // Callback hooks, not async ones: each async hook costs every request a promise and a turn of the microtask queue.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    done(requestHeadProblem(request.raw.httpVersion, request.headers));
  });
  // An Expect other than 100-continue: Node answers a bare 417 unless someone listens; the request goes on to
  // Fastify, whose onRequest hook above answers it with the error object.
  app.server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    app.server.emit('request', req, res);
  });

  app.addHook('onResponse', (request, reply, done) => {
    recordAnswer(request, reply);
    done();
  });

  await app.register(async (scope) => {
    await scope.register(multipart);
    await scope.register(imageRoutes, { ctx });
    await scope.register(imageInfoRoutes, { ctx });
  });
  await app.register(fastifyStatic, STATIC_FILES);
  await app.register(healthRoutes, { ctx });
  await app.register(signupRoutes, { ctx });
  await app.register(keyRoutes, { ctx });
  await app.register(accountRoutes, { ctx });
  await app.register(billingRoutes, { ctx });
  await app.register(webhookRoutes, { ctx });
  const hostedPages = ctx.billing.hostedPages;
  if (hostedPages) await app.register(devBillingRoutes, { ctx, provider: hostedPages });
  if (ctx.config.devMailPage) await app.register(devMailRoutes, { ctx });
  if (ctx.config.isProduction && ctx.config.nodeEnv !== 'production') {
    ctx.log.warn(`NODE_ENV=${ctx.config.nodeEnv} is neither development nor test: running as production`);
  }
  if (ctx.config.isProduction && ctx.config.devMailPage) {
    ctx.log.warn(
      'DEV_MAIL_PAGE=on in production: /dev/mail shows every sign-up and recovery link to whoever opens it',
    );
  }
  if (!ctx.billing.paidTiers) {
    ctx.log.warn('paid tiers are off: production without STRIPE_SECRET_KEY and LOCAL_BILLING is not on');
  }
  await app.register(metricsRoutes, { ctx });
  await app.register(docsRoutes, { ctx });
  await app.register(playgroundRoutes, { ctx });
  await app.register(deliveryRoutes, { ctx });
  await app.register(deliverySettingsRoutes, { ctx });
  await app.register(overlayRoutes, { ctx });
  await app.register(presetRoutes, { ctx });
  await app.register(deliveryPolicyRoutes, { ctx });
  return app;
}
