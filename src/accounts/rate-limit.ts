// Per-IP limits (signup/recovery, checkout), per-account limits (image info, delivery purges) and the silent
// per-mailbox mail cap, all fixed windows in the store.
import ipaddr from 'ipaddr.js';
import { rateLimited } from './errors.ts';
import type { Db } from '../store/schema.ts';
import { countAttempt, deleteOldWindows } from '../store/rate-limits.ts';

/** At most this many link mails per mailbox per MAIL_CAP_WINDOW_SECONDS; more are dropped silently. */
export const MAIL_CAP_PER_ADDRESS = 3;
export const MAIL_CAP_WINDOW_SECONDS = 3600;

const SIGNUP_BUCKET = 'signup-ip:';
const CHECKOUT_BUCKET = 'checkout-ip:';
const MAIL_BUCKET = 'mail-to:';
const INFO_BUCKET = 'info-account:';
const PURGE_BUCKET = 'purge-account:';

/**
 * The inbox an address delivers to, for the mail cap (docs/accounts.md): lower-cased, with any `+tag`
 * removed from the local part, so `Ann+1@Example.com` and `ann+2@example.com` share `ann@example.com`'s cap.
 */
export function mailboxOf(email: string): string {
  const lower = email.trim().toLowerCase();
  const at = lower.lastIndexOf('@');
  if (at < 0) return lower;
  const local = lower.slice(0, at);
  const plus = local.indexOf('+');
  return (plus < 0 ? local : local.slice(0, plus)) + lower.slice(at);
}

export function windowStartOf(nowSeconds: number, windowSeconds: number): number {
  return Math.floor(nowSeconds / windowSeconds) * windowSeconds;
}

/** Seconds until the window that contains `nowSeconds` ends (at least 1). */
export function secondsUntilWindowEnds(nowSeconds: number, windowSeconds: number): number {
  return Math.max(1, windowStartOf(nowSeconds, windowSeconds) + windowSeconds - Math.floor(nowSeconds));
}

/**
 * The subject an IP is counted under: an IPv4 address as is (also when IPv4-mapped), an IPv6 address by its
 * /64, since one host usually holds a whole /64 and could otherwise rotate addresses at will.
 */
export function rateLimitSubject(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const addr = ipaddr.process(ip);
  if (addr.kind() === 'ipv4') return addr.toString();
  const parts = (addr as ipaddr.IPv6).parts.slice(0, 4);
  return `${parts.map((p) => p.toString(16)).join(':')}::/64`;
}

export interface FixedWindow {
  limit: number;
  windowSeconds: number;
}

// Old windows are swept now and then rather than on every attempt.
const SWEEP_EVERY_ATTEMPTS = 100;
const attemptsSinceSweep = new Map<string, number>();

async function sweepOccasionally(db: Db, prefix: string, windowStart: number): Promise<void> {
  const attempts = (attemptsSinceSweep.get(prefix) ?? 0) + 1;
  attemptsSinceSweep.set(prefix, attempts % SWEEP_EVERY_ATTEMPTS);
  if (attempts >= SWEEP_EVERY_ATTEMPTS) await deleteOldWindows(db, prefix, windowStart);
}

/** Counts an attempt from `ip` in `bucket`; throws 429 rate_limited with Retry-After past the window's limit. */
async function checkIpRate(
  db: Db,
  bucket: string,
  what: string,
  ip: string,
  rule: FixedWindow,
  now: Date,
): Promise<void> {
  const nowSeconds = now.getTime() / 1000;
  const windowStart = windowStartOf(nowSeconds, rule.windowSeconds);
  const count = await countAttempt(db, bucket + rateLimitSubject(ip), windowStart);
  await sweepOccasionally(db, bucket, windowStart);
  if (count > rule.limit) {
    const retryAfter = secondsUntilWindowEnds(nowSeconds, rule.windowSeconds);
    throw rateLimited(what, rule.limit, rule.windowSeconds, retryAfter);
  }
}

/** Signup and key recovery share one counter per client IP. */
export function checkSignupRate(db: Db, ip: string, rule: FixedWindow, now = new Date()): Promise<void> {
  return checkIpRate(db, SIGNUP_BUCKET, 'signup or recovery attempts', ip, rule, now);
}

/** Checkout has its own counter: each new e-mail creates a provider customer with the operator's key. */
export function checkCheckoutRate(db: Db, ip: string, rule: FixedWindow, now = new Date()): Promise<void> {
  return checkIpRate(db, CHECKOUT_BUCKET, 'checkout attempts', ip, rule, now);
}

/** Counts a mail to `email`'s mailbox; false once it has had its share this hour (the caller stays silent). */
export async function takeMailAllowance(db: Db, email: string, now = new Date()): Promise<boolean> {
  const windowStart = windowStartOf(now.getTime() / 1000, MAIL_CAP_WINDOW_SECONDS);
  const count = await countAttempt(db, MAIL_BUCKET + mailboxOf(email), windowStart);
  await sweepOccasionally(db, MAIL_BUCKET, windowStart);
  return count <= MAIL_CAP_PER_ADDRESS;
}

/** The probe's window: INFO_RATE_LIMIT answers per minute (docs/images.md, "Probe an image"). */
export const INFO_RATE_WINDOW_SECONDS = 60;

/** Counts an attempt of an account in `bucket`; throws 429 rate_limited with Retry-After past the window's limit. */
async function checkAccountRate(
  db: Db,
  bucket: string,
  what: string,
  accountId: string,
  rule: FixedWindow,
  now: Date,
): Promise<void> {
  const nowSeconds = now.getTime() / 1000;
  const windowStart = windowStartOf(nowSeconds, rule.windowSeconds);
  const count = await countAttempt(db, bucket + accountId, windowStart);
  await sweepOccasionally(db, bucket, windowStart);
  if (count > rule.limit) {
    const retryAfter = secondsUntilWindowEnds(nowSeconds, rule.windowSeconds);
    throw rateLimited(what, rule.limit, rule.windowSeconds, retryAfter, 'with this key');
  }
}

/**
 * Counts a POST /v1/image/info call of an account (one active key each, so per key; a rotated key keeps the
 * count); throws 429 rate_limited with Retry-After past INFO_RATE_LIMIT in the minute.
 */
export function checkInfoRate(db: Db, accountId: string, limit: number, now = new Date()): Promise<void> {
  const rule = { limit, windowSeconds: INFO_RATE_WINDOW_SECONDS };
  return checkAccountRate(db, INFO_BUCKET, 'image info requests', accountId, rule, now);
}

/**
 * Delivery purges of one account: each is a store write every instance then reads, and "all" is there for many
 * sources at once.
 */
export const PURGE_RATE: FixedWindow = { limit: 60, windowSeconds: 60 };

/** Counts a POST /v1/delivery/purge of an account; throws 429 rate_limited with Retry-After past PURGE_RATE. */
export function checkPurgeRate(db: Db, accountId: string, now = new Date()): Promise<void> {
  return checkAccountRate(db, PURGE_BUCKET, 'delivery purges', accountId, PURGE_RATE, now);
}
