// owns: an account's delivery settings: the signing secret (created, rotated with a grace, verified) and the
// origins its URLs may fetch from.
import { randomBytes } from 'node:crypto';
import type { Db } from '../store/schema.ts';
import {
  countDeliveryImage,
  findDeliverySigner,
  rotateDeliverySecret,
  setDeliveryOrigins,
  type DeliverySigner,
} from '../store/delivery.ts';
import { invalidUrlSignature, originNotAllowed } from './errors.ts';
import { signatureMatches, type DeliveryRequestPath } from './url.ts';

export const DELIVERY_SECRET_PREFIX = 'imgpd_';

/** 256 random bits, base64url: as strong as an API key, and shaped so it is recognisable in a leak scan. */
export function generateDeliverySecret(): string {
  return DELIVERY_SECRET_PREFIX + randomBytes(32).toString('base64url');
}

/** Verifies against this key when an account has no secret, so an unknown account costs the same work. */
const STAND_IN_SECRET = generateDeliverySecret();

export interface NewDeliverySecret {
  secret: string;
  createdAt: string;
  /** Until when the replaced secret keeps verifying; null when there was none. */
  previousSecretValidUntil: string | null;
}

/** Creates or rotates the account's signing secret; the replaced one verifies for `graceSeconds` more. */
export async function rotateSecret(
  db: Db,
  accountId: string,
  graceSeconds: number,
  now = new Date(),
): Promise<NewDeliverySecret> {
  const secret = generateDeliverySecret();
  const validUntil = new Date(now.getTime() + graceSeconds * 1000).toISOString();
  await rotateDeliverySecret(db, accountId, secret, now.toISOString(), validUntil);
  const signer = await findDeliverySigner(db, accountId);
  return {
    secret,
    createdAt: now.toISOString(),
    previousSecretValidUntil: signer?.previousSecret ? (signer.previousValidUntil ?? null) : null,
  };
}

/**
 * The signer of a delivery URL, or 403 invalid_url_signature. Every call reads the store once and computes two
 * HMACs (current and previous secret, or the stand-in), whether or not the account exists or has a secret: the
 * answer and the work do not tell an unknown account from a wrong signature.
 */
export async function verifyDeliveryPath(
  db: Db,
  path: DeliveryRequestPath,
  now = new Date(),
): Promise<DeliverySigner> {
  const signer = await findDeliverySigner(db, path.accountId);
  const current = signer?.secret ?? STAND_IN_SECRET;
  const previousValid =
    signer?.previousSecret && signer.previousValidUntil && signer.previousValidUntil > now.toISOString();
  const previous = previousValid ? (signer.previousSecret as string) : STAND_IN_SECRET;
  const matchesCurrent = signatureMatches(current, path.signedPart, path.signature);
  const matchesPrevious = signatureMatches(previous, path.signedPart, path.signature);
  const hasSecret = signer?.secret !== null && signer?.secret !== undefined;
  if (!signer || !hasSecret || !(matchesCurrent || (previousValid && matchesPrevious))) {
    throw invalidUrlSignature();
  }
  return signer;
}

/** The origins of a signer (parsed JSON); empty: any. */
export function allowedOrigins(signer: Pick<DeliverySigner, 'allowedOrigins'>): string[] {
  const parsed: unknown = JSON.parse(signer.allowedOrigins);
  return Array.isArray(parsed) ? parsed.filter((o): o is string => typeof o === 'string') : [];
}

/** The origin (`scheme://host[:port]`) of a source URL, or undefined when it is not an absolute URL. */
export function sourceOrigin(source: string): string | undefined {
  try {
    return new URL(source).origin;
  } catch {
    return undefined;
  }
}

/** 403 origin_not_allowed unless `url` is from one of `origins` (an empty list allows any). */
export function checkAllowedOrigin(origins: string[], url: string): void {
  const origin = sourceOrigin(url);
  if (origins.length > 0 && (origin === undefined || !origins.includes(origin))) {
    throw originNotAllowed(origin ?? url);
  }
}

export async function replaceAllowedOrigins(db: Db, accountId: string, origins: string[]): Promise<void> {
  await setDeliveryOrigins(db, accountId, JSON.stringify(origins));
}

/** Counts a delivered (processed) image on its UTC day, for the usage figures. */
export async function recordDeliveryImage(db: Db, accountId: string, now = new Date()): Promise<void> {
  await countDeliveryImage(db, accountId, now.toISOString().slice(0, 10));
}
