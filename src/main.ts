// owns: running the server process: config → context → server → listen, dev key, and graceful shutdown.
import type { FastifyInstance } from 'fastify';
import { seedDevKey } from './accounts/dev-key.ts';
import { refundAbandonedReservations } from './accounts/quota.ts';
import type { Config } from './config.ts';
import { createContext, createLogger, type AppContext } from './context.ts';
import { buildServer } from './http/server.ts';

export interface RunningServer {
  app: FastifyInstance;
  ctx: AppContext;
  url: string;
  close(): Promise<void>;
}

export async function startServer(config: Config): Promise<RunningServer> {
  const log = createLogger(config);
  const ctx = await createContext(config, log);
  await seedDevKey(ctx);
  await refundUnitsOfDeadRequests(ctx);
  const app = await buildServer(ctx);
  const url = await app.listen({ port: config.port, host: config.host });
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      await app.close();
      await ctx.close();
    })();
    return closing;
  };
  return { app, ctx, url, close };
}

/**
 * Units reserved by requests of a process that was killed (SIGKILL, OOM, power loss) are refunded at start.
 * SQLite has one serving process, so every reservation found at start is abandoned. PostgreSQL is shared by
 * several instances: only reservations older than the longest a request can live are.
 */
async function refundUnitsOfDeadRequests(ctx: AppContext): Promise<void> {
  const { config } = ctx;
  const longestRequestMs =
    config.requestTimeoutMs +
    config.fetchTimeoutMs * (config.maxRedirects + 1) +
    config.processTimeoutMs +
    60_000;
  const before = new Date(Date.now() - (ctx.store.dialect === 'sqlite' ? 0 : longestRequestMs));
  const refunded = await refundAbandonedReservations(ctx.store.db, before);
  if (refunded > 0) ctx.log.warn({ refunded }, 'refunded quota units of requests cut short by a restart');
}

/** `imgpipe serve`: runs until SIGTERM/SIGINT, then lets in-flight requests finish and exits 0. */
export async function serve(config: Config): Promise<void> {
  const server = await startServer(config);
  const shutdown = (signal: string) => {
    server.ctx.log.info({ signal }, 'shutting down');
    const deadline = setTimeout(() => {
      server.ctx.log.error('shutdown deadline passed; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs);
    deadline.unref();
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        server.ctx.log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}
