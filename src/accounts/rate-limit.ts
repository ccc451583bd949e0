// Signup/recovery rate limit per client IP and the silent per-address mail cap, both fixed windows in the store.
import ipaddr from 'ipaddr.js';
import { apiError } from '../errors.ts';
import type { Db } from '../store/schema.ts';
import { countAttempt, deleteOldWindows } from '../store/rate-limits.ts';

/** At most this many link mails per address per MAIL_CAP_WINDOW_SECONDS; more are dropped silently. */
export const MAIL_CAP_PER_ADDRESS = 3;
export const MAIL_CAP_WINDOW_SECONDS = 3600;

const SIGNUP_BUCKET = 'signup-ip:';
const MAIL_BUCKET = 'mail-to:';

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

/** Counts an attempt from `ip`; throws 429 rate_limited with Retry-After once the window's limit is passed. */
export async function checkSignupRate(
  db: Db,
  ip: string,
  rule: FixedWindow,
  now = new Date(),
): Promise<void> {
  const nowSeconds = now.getTime() / 1000;
  const windowStart = windowStartOf(nowSeconds, rule.windowSeconds);
  const count = await countAttempt(db, SIGNUP_BUCKET + rateLimitSubject(ip), windowStart);
  await sweepOccasionally(db, SIGNUP_BUCKET, windowStart);
  if (count > rule.limit) {
    const retryAfter = secondsUntilWindowEnds(nowSeconds, rule.windowSeconds);
    throw apiError(
      'rate_limited',
      `Too many signup or recovery attempts from your address: at most ${rule.limit} per ${rule.windowSeconds} s. Try again in ${retryAfter} s.`,
      { headers: { 'Retry-After': retryAfter } },
    );
  }
}

/** Counts a mail to `emailKey`; false once the address has had its share this hour (the caller stays silent). */
export async function takeMailAllowance(db: Db, emailKey: string, now = new Date()): Promise<boolean> {
  const windowStart = windowStartOf(now.getTime() / 1000, MAIL_CAP_WINDOW_SECONDS);
  const count = await countAttempt(db, MAIL_BUCKET + emailKey, windowStart);
  await sweepOccasionally(db, MAIL_BUCKET, windowStart);
  return count <= MAIL_CAP_PER_ADDRESS;
}
