// Magic-link lifecycle for signup and key recovery: request (same work for every address), verify (single use).
import { createHash, randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Mailer } from '../outbox/worker.ts';
import type { ApiError } from '../errors.ts';
import { invalidToken, tokenExpired, tokenUsed } from './errors.ts';
import { linkMail, verifyLink } from '../mail/templates.ts';
import { findOrCreateAccount } from '../store/accounts.ts';
import { insertOutboxMail } from '../store/outbox.ts';
import type { Db } from '../store/schema.ts';
import {
  consumeMagicToken,
  deleteExpiredMagicTokens,
  findMagicToken,
  insertMagicToken,
  type TokenPurpose,
} from '../store/tokens.ts';
import { SHOWN_ONCE } from './api-key.ts';
import { issueFirstKey, recoverAccountKey } from './key-issuer.ts';
import { takeMailAllowance } from './rate-limit.ts';

/** The one answer of POST /v1/signup and POST /v1/keys/recover, whatever the address. */
export const LINK_SENT_MESSAGE =
  'If this address can receive mail, a single-use link is on its way to it. Open it to get your API key.';

/** 32 random bytes, base64url: 43 characters, 256 bits. */
const TOKEN_BYTES = 32;
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;
/** Expired tokens are kept this long so they still answer token_expired, then deleted. */
const EXPIRED_TOKEN_RETENTION_MS = 7 * 24 * 3600 * 1000;

export function generateMagicToken(): string {
  return randomBytes(TOKEN_BYTES).toString('base64url');
}

export function looksLikeMagicToken(value: unknown): value is string {
  return typeof value === 'string' && TOKEN_SHAPE.test(value);
}

/** 256 random bits need no slow hash: SHA-256 hides the token from anyone who reads the store. */
export function hashMagicToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** What the magic-link lifecycle needs of the service (the AppContext provides it). */
export interface SignupDeps {
  store: { db: Db };
  log: Logger;
  mailer: Pick<Mailer, 'wake'>;
  config: Pick<Config, 'publicBaseUrl' | 'magicLinkTtlSeconds'>;
}

/**
 * Issues a token and queues its mail. Nothing here depends on whether an account exists, so the answer and
 * the work are the same for every address; an address past its mail cap is skipped silently.
 */
export async function requestMagicLink(ctx: SignupDeps, purpose: TokenPurpose, email: string): Promise<void> {
  const { db } = ctx.store;
  const now = new Date();
  if (!(await takeMailAllowance(db, email, now))) {
    ctx.log.info({ purpose }, 'mail cap reached for an address; no mail sent');
    return;
  }
  const token = generateMagicToken();
  const ttl = ctx.config.magicLinkTtlSeconds;
  const link = verifyLink(ctx.config.publicBaseUrl, purpose, token);
  // The token and its mail are committed together: no token without its mail, no mail for a lost token.
  await db.transaction().execute(async (trx) => {
    await insertMagicToken(
      trx,
      { tokenHash: hashMagicToken(token), purpose, email, expiresAt: new Date(now.getTime() + ttl * 1000) },
      now,
    );
    await insertOutboxMail(trx, { to: email, ...linkMail(purpose, link, ttl), links: [link] }, now);
  });
  ctx.mailer.wake();
  await deleteExpiredMagicTokens(db, new Date(now.getTime() - EXPIRED_TOKEN_RETENTION_MS));
}

export interface VerifiedLink {
  apiKey: string | null;
  email: string;
  tier: string;
  message: string;
}

const MESSAGES = {
  issued: `Your API key is ${SHOWN_ONCE} Send it as "Authorization: Bearer <key>".`,
  alreadyActive:
    'This address already has an active API key, so no new one was issued. Replace a lost key with key ' +
    'recovery (the form on /pricing, or POST /v1/keys/recover), or a leaked one on /account (POST /v1/keys/rotate).',
  replaced: `Your previous key is revoked. The new key is ${SHOWN_ONCE}`,
};

/** What a link's page can offer: a usable link, or why not. `missing`: the address holds no token at all. */
export type LinkState = 'usable' | 'used' | 'expired' | 'unknown' | 'missing';

/** The state of a link, read without consuming it (the verify page shows its button only for a usable one). */
export async function linkState(
  ctx: Pick<SignupDeps, 'store'>,
  purpose: TokenPurpose,
  token: unknown,
  now = new Date(),
): Promise<LinkState> {
  if (token === undefined || token === '') return 'missing';
  if (!looksLikeMagicToken(token)) return 'unknown';
  const row = await findMagicToken(ctx.store.db, hashMagicToken(token), purpose);
  if (!row) return 'unknown';
  if (row.used_at !== null) return 'used';
  if (row.expires_at <= now.toISOString()) return 'expired';
  return 'usable';
}

/** Why a token could not be consumed: unknown (or of the other purpose), already used, or expired. */
async function tokenFailure(db: Db, tokenHash: string, purpose: TokenPurpose, now: Date): Promise<ApiError> {
  const row = await findMagicToken(db, tokenHash, purpose);
  if (!row) return invalidToken();
  if (row.used_at !== null) return tokenUsed();
  if (row.expires_at <= now.toISOString()) return tokenExpired();
  return invalidToken();
}

/**
 * Consumes the token and acts on its account in one transaction: the account is created on the first successful
 * verify; signup issues a key only when none is active (else apiKey null); recovery revokes and replaces it.
 */
export async function verifyMagicLink(
  ctx: Pick<SignupDeps, 'store'>,
  purpose: TokenPurpose,
  token: unknown,
): Promise<VerifiedLink> {
  if (!looksLikeMagicToken(token)) {
    throw invalidToken();
  }
  const { db } = ctx.store;
  const tokenHash = hashMagicToken(token);
  const now = new Date();
  const result = await db.transaction().execute(async (trx) => {
    const email = await consumeMagicToken(trx, tokenHash, purpose, now);
    if (email === undefined) return undefined;
    const account = await findOrCreateAccount(trx, email);
    if (purpose === 'recover') {
      return { account, apiKey: await recoverAccountKey(trx, account.id), message: MESSAGES.replaced };
    }
    const apiKey = await issueFirstKey(trx, account.id);
    return { account, apiKey, message: apiKey === null ? MESSAGES.alreadyActive : MESSAGES.issued };
  });
  if (!result) throw await tokenFailure(db, tokenHash, purpose, now);
  return {
    apiKey: result.apiKey,
    email: result.account.email,
    tier: result.account.tier,
    message: result.message,
  };
}
