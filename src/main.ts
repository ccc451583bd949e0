// owns: running the server process: config → context → server → listen, dev key, and graceful shutdown.
import { createServer, type AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { seedDevKey, type DevKeySeed } from './accounts/dev-key.ts';
import { keyPrefix } from './accounts/api-key.ts';
import { refundAbandonedReservations } from './accounts/quota.ts';
import { localBaseUrl, type Config } from './config.ts';
import { createContext, createLogger, type AppContext } from './context.ts';
import { buildServer } from './http/server.ts';
import { lockSqliteForServe, sqliteFileOf } from './serve-lock.ts';
import { serveEnvironmentFor } from '../bin/serve-environment.js';

export interface RunningServer {
  app: FastifyInstance;
  ctx: AppContext;
  url: string;
  close(): Promise<void>;
}

/**
 * The config with the port that will be listened on, so that it is final before anything is built from it: links
 * name that port unless PUBLIC_BASE_URL says otherwise, and PORT=0 asks for any free one. That one is held by a
 * socket of its own until `release`, just before the server listens on it.
 */
async function withListenPort(config: Config): Promise<{ config: Config; release: () => Promise<void> }> {
  if (config.port !== 0 || !config.publicBaseUrlFromPort) return { config, release: async () => {} };
  const holder = createServer();
  await new Promise<void>((resolve, reject) => {
    holder.once('error', reject);
    holder.listen({ port: 0, host: config.host }, resolve);
  });
  const { port } = holder.address() as AddressInfo;
  return {
    config: { ...config, port, publicBaseUrl: localBaseUrl(config.host, port) },
    // Resolves also when already released (close then reports that the socket is not listening).
    release: () => new Promise((resolve) => holder.close(() => resolve())),
  };
}

export async function startServer(givenConfig: Config): Promise<RunningServer & { devKey: DevKeySeed }> {
  const log = createLogger(givenConfig);
  const sqliteFile = sqliteFileOf(givenConfig.databaseUrl);
  // Before the store is opened: a second server on the same file must not touch it (refunds at start would
  // take the first one's reservations for abandoned).
  const unlock = sqliteFile ? await lockSqliteForServe(sqliteFile) : () => {};
  let release = async () => {};
  let ctx: AppContext | undefined;
  let app: FastifyInstance | undefined;
  let url: string;
  let devKey: DevKeySeed = { kind: 'none' };
  try {
    const listenPort = await withListenPort(givenConfig);
    release = listenPort.release;
    ctx = await createContext(listenPort.config, log);
    devKey = await seedDevKey(ctx);
    await refundUnitsOfDeadRequests(ctx);
    app = await buildServer(ctx);
    await app.ready();
    await release();
    url = await app.listen({ port: ctx.config.port, host: ctx.config.host });
  } catch (err) {
    await release();
    await app?.close();
    await ctx?.close();
    unlock();
    throw err;
  }
  const started = { app, ctx };
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      await started.app.close();
      await started.ctx.close();
      unlock();
    })();
    return closing;
  };
  return { ...started, url, close, devKey };
}

const DEV_KEY_STATES = { reactivated: 're-activated', already_active: 'active' } as const;

/** The summary's line about the dev key: the key when this start made it or DEV_KEY holds it, else how to get one. */
function devKeyLine(seed: DevKeySeed): string {
  switch (seed.kind) {
    case 'created':
      return `  your key    ${seed.key}  (dev@localhost, free tier; shown once)`;
    case 'refused':
      return `  DEV_KEY     not seeded: ${seed.reason}`;
    case 'none':
      return '  need a key? npx imgpipe keys create --email dev@localhost --tier free';
    case 'seeded':
      return `  your key    ${seed.key}  (dev@localhost, from DEV_KEY: seeded)`;
    default:
      return `  your key    ${keyPrefix(seed.key)}  (dev@localhost, from DEV_KEY: ${DEV_KEY_STATES[seed.kind]})`;
  }
}

/** The start-up summary for a human, on stderr so stdout stays one JSON log line per event. */
export function startupSummary(
  baseUrl: string,
  devKey: DevKeySeed,
  config: Pick<Config, 'devMailPage' | 'isProduction'>,
): string {
  const lines = [
    'imgpipe is running',
    `  API         POST ${baseUrl}/v1/image`,
    `  playground  ${baseUrl}/`,
    `  docs        ${baseUrl}/docs`,
    `  pricing     ${baseUrl}/pricing`,
    ...(config.devMailPage
      ? [
          config.isProduction
            ? `  mail        ${baseUrl}/dev/mail  (DEV_MAIL_PAGE=on in production: anyone who opens it reads every sign-up and recovery link)`
            : `  mail        ${baseUrl}/dev/mail  (development: mails are written there, not sent)`,
        ]
      : []),
    devKeyLine(devKey),
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * Units reserved by requests of a process that was killed (SIGKILL, OOM, power loss) are refunded at start on
 * SQLite, which has one serving process (the serve lock), so every reservation found at start is abandoned.
 * On PostgreSQL, shared by several instances, the sweep of every instance refunds them (ctx.liveness).
 */
async function refundUnitsOfDeadRequests(ctx: AppContext): Promise<void> {
  if (ctx.store.dialect !== 'sqlite') return;
  const refunded = await refundAbandonedReservations(ctx.store.db, new Date());
  if (refunded > 0) {
    ctx.metrics.recordAbandonedUnitsRefunded(refunded);
    ctx.log.warn({ refunded }, 'refunded quota units of requests cut short by a restart');
  }
}

/** After the shutdown deadline cut what was left, how long closing the store may still take. */
const CLOSE_GRACE_MS = 2000;

/**
 * `imgpipe serve`: runs until SIGTERM/SIGINT. Then: stop accepting (idle keep-alive sockets close at once),
 * let requests in flight finish for up to SHUTDOWN_TIMEOUT_MS, cut what is left, close the store, exit 0.
 * A second signal exits at once with 1.
 */
export async function serve(config: Config): Promise<void> {
  const starting = startServer(config);
  // Handlers first: a signal that arrives while the server starts (or just after it logged that it listens)
  // must shut it down cleanly, not kill it with the default action.
  let shuttingDown = false;
  const shutdown = async (signal: string) => {
    if (shuttingDown) {
      process.stderr.write(`second ${signal} during shutdown; exiting now\n`);
      process.exit(1);
    }
    shuttingDown = true;
    const server = await starting;
    const { log } = server.ctx;
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
  const onSignal = (signal: string) => {
    // A start-up that fails is reported by serve's caller; the signal then has nothing left to stop.
    shutdown(signal).catch(() => process.exit(1));
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  const server = await starting;
  warnOfMissingEnvironment(server.ctx.log, process.env, process.execArgv);
  process.stderr.write(startupSummary(server.ctx.config.publicBaseUrl, server.devKey, config));
}

/**
 * One warning per variable that libuv, glibc or V8 read before this process ran and that its start line lacks
 * (bin/serve-environment.js): set so late, it would have no effect, so only the operator can set it.
 */
export function warnOfMissingEnvironment(
  log: Pick<Logger, 'warn'>,
  env: NodeJS.ProcessEnv,
  execArgv: string[] = [],
): void {
  for (const [name, value] of Object.entries(serveEnvironmentFor(env, execArgv))) {
    log.warn(
      { variable: name, recommended: value, current: env[name] ?? null },
      `${name} is not set as serve needs it: start with ${name}=${/\s/.test(value) ? `"${value}"` : value} (README, "Starting the server")`,
    );
  }
}
