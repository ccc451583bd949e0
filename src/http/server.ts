// owns: the Fastify instance: server timeouts, logging, the error handler and the registration of every route.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import multipart from '@fastify/multipart';
import type { AppContext } from '../context.ts';
import { handleClientError, registerErrorHandler } from './error-handler.ts';
import { healthRoutes } from './routes/health.ts';
import { imageRoutes } from './routes/image.ts';
import { signupRoutes } from './routes/signup.ts';
import { keyRoutes } from './routes/keys.ts';
import { accountRoutes } from './routes/account.ts';
import { billingRoutes } from './routes/billing.ts';
import { devBillingRoutes } from './routes/dev-billing.ts';
import { webhookRoutes } from './routes/webhook.ts';

export async function buildServer(ctx: AppContext): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: ctx.log as FastifyBaseLogger,
    // One line per request is written by the onResponse hook below instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: ctx.config.trustProxy,
    bodyLimit: 1024 * 1024,
    // Bounds a client that never finishes its headers; bodies are bounded by requestTimeout below.
    connectionTimeout: 0,
    requestTimeout: 120_000,
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
  await app.register(signupRoutes, { ctx });
  await app.register(keyRoutes, { ctx });
  await app.register(accountRoutes, { ctx });
  await app.register(billingRoutes, { ctx });
  await app.register(webhookRoutes, { ctx });
  if (!ctx.config.stripe) await app.register(devBillingRoutes, { ctx });
  return app;
}
