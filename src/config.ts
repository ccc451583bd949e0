// owns: reading the environment into one typed Config; every invalid value stops start-up naming its variable.
import { resolve } from 'node:path';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';

/**
 * The API key's form (`imgp_` + 32 to 128 base62 characters): DEV_KEY is checked with it
 * here, requests in accounts/api-key.ts, so a DEV_KEY that passes start-up also authenticates.
 */
export const API_KEY_SHAPE = /^imgp_[0-9A-Za-z]{32,128}$/;

const positiveInt = z.coerce.number().int().positive();
const nonNegativeInt = z.coerce.number().int().min(0);
const absoluteUrl = z.url().transform((v) => v.replace(/\/+$/, ''));
const cidrList = z.string().transform((v, ctx) => {
  const items = v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const item of items) {
    if (!/^[0-9a-fA-F:.]+\/\d{1,3}$/.test(item)) {
      ctx.addIssue({ code: 'custom', message: `"${item}" is not a CIDR such as 10.0.0.0/8` });
    }
  }
  return items;
});

export type TrustProxy = false | number | string[];

/**
 * TRUST_PROXY: `false` trusts no proxy; `true` one hop (the client is the rightmost X-Forwarded-For entry, the
 * one the proxy in front appended); a number N trusts N hops; a list of CIDRs trusts proxies at those addresses.
 * Never "trust everything": the leftmost entry is written by the client. Undefined when the value is invalid.
 */
export function parseTrustProxy(value: string): TrustProxy | undefined {
  const v = value.trim().toLowerCase();
  if (['false', '0', 'no', 'off'].includes(v)) return false;
  if (['true', 'yes', 'on'].includes(v)) return 1;
  if (/^\d+$/.test(v)) return Number(v);
  const items = v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length === 0) return undefined;
  for (const item of items) {
    if (!/^[0-9a-f:.]+(\/\d{1,3})?$/.test(item) || !ipaddr.isValid(item.split('/')[0] as string))
      return undefined;
  }
  return items;
}

/** The tiers, cheapest first (the order is their rank); the one list every module takes them from. */
export const TIERS = ['free', 'starter', 'growth', 'scale'] as const;
export type Tier = (typeof TIERS)[number];
/** The tiers that are bought; `free` is the rest. */
export const PAID_TIERS = ['starter', 'growth', 'scale'] as const satisfies readonly Tier[];
export type PaidTier = (typeof PAID_TIERS)[number];

export function isTier(value: unknown): value is Tier {
  return typeof value === 'string' && (TIERS as readonly string[]).includes(value);
}

/**
 * Development surfaces (dev key, local billing, /dev/mail) exist only when NODE_ENV is exactly `development` or
 * `test` (unset means development): any other value, however spelled (`Production`, `prod`, `staging`) and the
 * empty one (`NODE_ENV=`), is production.
 */
export function isProductionEnv(nodeEnv: string): boolean {
  return nodeEnv !== 'development' && nodeEnv !== 'test';
}

/**
 * The base URL of an instance without PUBLIC_BASE_URL: the address it listens on (HOST, 127.0.0.1 by default),
 * so the banner, links, mails and checkout returns name the very origin a user opens, never a second one
 * (pages keep the key in the tab's sessionStorage, which is per origin). A wildcard HOST names 127.0.0.1.
 */
export function localBaseUrl(host: string, port: number): string {
  const name = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host;
  return `http://${name.includes(':') ? `[${name}]` : name}:${port}`;
}

/**
 * The configuration: every environment variable with its default (docs/configuration.md), then the typed Config
 * the service reads (Config is this schema's output type, so the two cannot drift apart).
 */
const configSchema = z
  .object({
    PORT: z.coerce.number().int().min(0).max(65535).default(3000),
    HOST: z.string().min(1).default('127.0.0.1'),
    PUBLIC_BASE_URL: absoluteUrl.optional(),
    DATA_DIR: z.string().min(1).default('./data'),
    DATABASE_URL: z
      .string()
      .regex(/^(sqlite:.+|postgres(ql)?:\/\/.+)$/, 'must be sqlite:PATH or postgres://…')
      .optional(),
    DATABASE_POOL_SIZE: positiveInt.default(10),
    DATABASE_STATEMENT_TIMEOUT_MS: positiveInt.default(5000),
    MAX_UPLOAD_BYTES: positiveInt.default(10_485_760),
    MAX_FETCH_BYTES: positiveInt.default(10_485_760),
    MAX_INPUT_PIXELS: positiveInt.default(40_000_000),
    MAX_RESIZE_DIMENSION: positiveInt.default(10_000),
    MAX_ANIMATION_FRAMES: positiveInt.default(300),
    INFO_RATE_LIMIT: positiveInt.default(120),
    PROCESS_TIMEOUT_MS: positiveInt.default(15_000),
    FETCH_TIMEOUT_MS: positiveInt.default(10_000),
    MAX_REDIRECTS: nonNegativeInt.default(3),
    MAX_CONCURRENT_JOBS: positiveInt.default(2),
    MAX_CONCURRENT_FETCHES: positiveInt.default(4),
    // 3: 15 % fewer bytes than 2 at an equal SSIMULACRA 2 for 0.96–1.24× its encode CPU (BENCHMARKS.md, Compression).
    AVIF_EFFORT: z.coerce.number().int().min(0).max(9).default(3),
    ISOLATE_JOBS: z.enum(['risky', 'all']).default('risky'),
    QUOTA_FREE: nonNegativeInt.default(1000),
    QUOTA_STARTER: nonNegativeInt.default(5000),
    QUOTA_GROWTH: nonNegativeInt.default(25_000),
    QUOTA_SCALE: nonNegativeInt.default(100_000),
    MAGIC_LINK_TTL_SECONDS: positiveInt.default(1800),
    SIGNUP_RATE_LIMIT: positiveInt.default(5),
    SIGNUP_RATE_WINDOW_SECONDS: positiveInt.default(3600),
    TRUST_PROXY: z
      .string()
      .transform((v, ctx) => {
        const parsed = parseTrustProxy(v);
        if (parsed === undefined) {
          ctx.addIssue({
            code: 'custom',
            message: 'must be true, false, a number of hops or a list of CIDRs',
          });
          return z.NEVER;
        }
        return parsed;
      })
      .default(false),
    LOCAL_BILLING: z.enum(['on', 'off']).optional(),
    DEV_MAIL_PAGE: z.enum(['on', 'off']).optional(),
    FETCH_ALLOW_CIDRS: cidrList.default([]),
    DEV_KEY: z
      .string()
      .regex(API_KEY_SHAPE, 'must be imgp_ followed by 32 to 128 base62 characters')
      .optional(),
    SMTP_URL: z
      .string()
      .regex(/^smtps?:\/\/.+/, 'must be smtp://… or smtps://…')
      .optional(),
    MAIL_FROM: z.string().min(1).default('imgpipe <no-reply@localhost>'),
    STRIPE_SECRET_KEY: z.string().min(1).optional(),
    STRIPE_WEBHOOK_SECRET: z.string().min(1).optional(),
    STRIPE_API_BASE: absoluteUrl.optional(),
    STRIPE_PRICE_STARTER: z.string().min(1).optional(),
    STRIPE_PRICE_GROWTH: z.string().min(1).optional(),
    STRIPE_PRICE_SCALE: z.string().min(1).optional(),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    SHUTDOWN_TIMEOUT_MS: positiveInt.default(10_000),
    REQUEST_TIMEOUT_MS: positiveInt.default(120_000),
    INSTANCE_DEAD_AFTER_MS: z.coerce.number().int().min(1000).default(60_000),
    NODE_ENV: z.string().default('development'),
    DELIVERY_CACHE_BYTES: nonNegativeInt.default(1_073_741_824),
    DELIVERY_MAX_AGE_SECONDS: nonNegativeInt.default(31_536_000),
    DELIVERY_SECRET_GRACE_SECONDS: nonNegativeInt.default(86_400),
  })
  .transform((e, ctx) => {
    if (e.STRIPE_SECRET_KEY && !e.STRIPE_WEBHOOK_SECRET) {
      ctx.addIssue({
        code: 'custom',
        path: ['STRIPE_WEBHOOK_SECRET'],
        message: 'required when STRIPE_SECRET_KEY is set',
      });
      return z.NEVER;
    }
    const dataDir = resolve(e.DATA_DIR);
    const quotas: Record<Tier, number> = {
      free: e.QUOTA_FREE,
      starter: e.QUOTA_STARTER,
      growth: e.QUOTA_GROWTH,
      scale: e.QUOTA_SCALE,
    };
    const prices: Partial<Record<PaidTier, string>> = {
      starter: e.STRIPE_PRICE_STARTER,
      growth: e.STRIPE_PRICE_GROWTH,
      scale: e.STRIPE_PRICE_SCALE,
    };
    return {
      port: e.PORT,
      host: e.HOST,
      /** PUBLIC_BASE_URL, else the listen address (see localBaseUrl); with PORT=0, set to the port listened on after listen. */
      publicBaseUrl: e.PUBLIC_BASE_URL ?? localBaseUrl(e.HOST, e.PORT),
      /** True when PUBLIC_BASE_URL is unset, so the base follows the port actually listened on. */
      publicBaseUrlFromPort: e.PUBLIC_BASE_URL === undefined,
      dataDir,
      databaseUrl: e.DATABASE_URL ?? `sqlite:${resolve(dataDir, 'imgpipe.db')}`,
      databasePoolSize: e.DATABASE_POOL_SIZE,
      databaseStatementTimeoutMs: e.DATABASE_STATEMENT_TIMEOUT_MS,
      maxUploadBytes: e.MAX_UPLOAD_BYTES,
      maxFetchBytes: e.MAX_FETCH_BYTES,
      maxInputPixels: e.MAX_INPUT_PIXELS,
      maxResizeDimension: e.MAX_RESIZE_DIMENSION,
      /** Most frames an animated input may have; MAX_INPUT_PIXELS counts every frame. */
      maxAnimationFrames: e.MAX_ANIMATION_FRAMES,
      /** POST /v1/image/info answers per key per minute. */
      infoRateLimit: e.INFO_RATE_LIMIT,
      processTimeoutMs: e.PROCESS_TIMEOUT_MS,
      fetchTimeoutMs: e.FETCH_TIMEOUT_MS,
      maxRedirects: e.MAX_REDIRECTS,
      maxConcurrentJobs: e.MAX_CONCURRENT_JOBS,
      maxConcurrentFetches: e.MAX_CONCURRENT_FETCHES,
      avifEffort: e.AVIF_EFFORT,
      /** Which jobs run in killable child processes: `risky` (all but the allow-list of runsInProcess) or `all`. */
      isolateJobs: e.ISOLATE_JOBS,
      quotas,
      magicLinkTtlSeconds: e.MAGIC_LINK_TTL_SECONDS,
      signupRateLimit: e.SIGNUP_RATE_LIMIT,
      signupRateWindowSeconds: e.SIGNUP_RATE_WINDOW_SECONDS,
      /** Fastify's trustProxy: false, a hop count, or the proxies' CIDRs (TRUST_PROXY). */
      trustProxy: e.TRUST_PROXY,
      /** The built-in local payment provider (no STRIPE_SECRET_KEY; LOCAL_BILLING, off in production). */
      localBilling:
        !e.STRIPE_SECRET_KEY && (e.LOCAL_BILLING ?? (isProductionEnv(e.NODE_ENV) ? 'off' : 'on')) === 'on',
      fetchAllowCidrs: e.FETCH_ALLOW_CIDRS,
      /** GET /dev/mail, the dev outbox as a page (no SMTP_URL; DEV_MAIL_PAGE, off in production). */
      devMailPage: !e.SMTP_URL && (e.DEV_MAIL_PAGE ?? (isProductionEnv(e.NODE_ENV) ? 'off' : 'on')) === 'on',
      devKey: e.DEV_KEY,
      smtpUrl: e.SMTP_URL,
      mailFrom: e.MAIL_FROM,
      stripe:
        e.STRIPE_SECRET_KEY && e.STRIPE_WEBHOOK_SECRET
          ? {
              secretKey: e.STRIPE_SECRET_KEY,
              webhookSecret: e.STRIPE_WEBHOOK_SECRET,
              apiBase: e.STRIPE_API_BASE,
              prices,
            }
          : undefined,
      logLevel: e.LOG_LEVEL,
      shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
      /** Longest a client may take to send a whole request (headers and body) before a 408. */
      requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
      /** An instance without a heartbeat for this long is dead: the others refund the units its requests held. */
      instanceDeadAfterMs: e.INSTANCE_DEAD_AFTER_MS,
      /** NODE_ENV as given (unset: development; empty stays empty, which is production). */
      nodeEnv: e.NODE_ENV,
      /** Fail closed: true for every NODE_ENV but development and test (see isProductionEnv). */
      isProduction: isProductionEnv(e.NODE_ENV),
      /** Signed delivery URLs (docs/delivery.md). */
      delivery: {
        /** Bytes of results cached on disk under DATA_DIR/delivery-cache; 0 turns the cache off. */
        cacheBytes: e.DELIVERY_CACHE_BYTES,
        /** Cache-Control max-age of a delivered image. */
        maxAgeSeconds: e.DELIVERY_MAX_AGE_SECONDS,
        /** How long the secret replaced by a rotation keeps verifying. */
        secretGraceSeconds: e.DELIVERY_SECRET_GRACE_SECONDS,
      },
    };
  });

export type Config = z.output<typeof configSchema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses `env` (process.env by default); throws ConfigError listing every bad variable by name. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // An empty variable counts as unset (its default applies), except NODE_ENV: set but empty is not development.
  const present = Object.fromEntries(
    Object.entries(env).filter(([name, v]) => v !== undefined && (v !== '' || name === 'NODE_ENV')),
  );
  const parsed = configSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  return parsed.data;
}
