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

/** After the shutdown deadline cut what was left, how long closing the store may still take. */
const CLOSE_GRACE_MS = 2000;

/**
 * `imgpipe serve`: runs until SIGTERM/SIGINT. Then: stop accepting (idle keep-alive sockets close at once),
 * let requests in flight finish for up to SHUTDOWN_TIMEOUT_MS, cut what is left, close the store, exit 0.
 * A second signal exits at once with 1.
 */
export async function serve(config: Config): Promise<void> {
  const server = await startServer(config);
  const { log } = server.ctx;
  let shuttingDown = false;
  const shutdown = (signal: string) => {
    if (shuttingDown) {
      log.warn({ signal }, 'second signal during shutdown; exiting now');
      process.exit(1);
    }
    shuttingDown = true;
    log.info(
      { signal, timeoutMs: config.shutdownTimeoutMs },
      'shutting down: waiting for requests in flight',
    );
    const deadline = setTimeout(() => {
      log.error('shutdown deadline passed; closing the connections still open');
      server.app.server.closeAllConnections();
      setTimeout(() => {
        log.error('the store did not close in time; exiting');
        process.exit(1);
      }, CLOSE_GRACE_MS).unref();
    }, config.shutdownTimeoutMs);
    deadline.unref();
    server.close().then(
      () => {
        clearTimeout(deadline);
        log.info('shutdown complete');
        process.exit(0);
      },
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}
