// owns: the Fastify instance: server timeouts, logging, the error handler and the registration of every route.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import multipart from '@fastify/multipart';
import type { AppContext } from '../context.ts';
import { handleClientError, registerErrorHandler } from './error-handler.ts';
import { healthRoutes } from './routes/health.ts';
import { imageRoutes } from './routes/image.ts';

/**
 * Node enforces requestTimeout only while headersTimeout is not larger than it (measured on Node 20: a slow
 * body was never cut off otherwise), and checks for expired requests every connectionsCheckingInterval
 * (30 s by default, longer than a short timeout).
 */
export function requestTimeoutOptions(requestTimeoutMs: number) {
  return {
    headersTimeout: Math.min(60_000, requestTimeoutMs),
    connectionsCheckingInterval: Math.max(250, Math.min(30_000, Math.floor(requestTimeoutMs / 4))),
  };
}

export async function buildServer(ctx: AppContext): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: ctx.log as FastifyBaseLogger,
    // One line per request is written by the onResponse hook below instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: ctx.config.trustProxy,
    bodyLimit: 1024 * 1024,
    // Bounds a client that never finishes its headers; bodies are bounded by requestTimeout below.
    connectionTimeout: 0,
    requestTimeout: ctx.config.requestTimeoutMs,
    http: requestTimeoutOptions(ctx.config.requestTimeoutMs),
    keepAliveTimeout: 10_000,
    return503OnClosing: true,
    clientErrorHandler: handleClientError,
  });
  registerErrorHandler(app);

  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      {
        method: request.method,
        route: request.routeOptions.url,
        status: reply.statusCode,
        errorCode: reply.errorCode,
        durationMs: Math.round(reply.elapsedTime),
        outputFormat: reply.outputFormat,
        accountId: request.account?.accountId,
      },
      'request',
    );
  });

  await app.register(async (scope) => {
    await scope.register(multipart);
    await scope.register(imageRoutes, { ctx });
  });
  await app.register(healthRoutes, { ctx });
  return app;
}
