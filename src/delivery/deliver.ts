// owns: answering one delivery URL: its signature checked first, then its options, expiry and source origin, the
// format negotiated, the derivative named; served from the instance's result cache or made once (miss.ts).
import type { operationsSchema } from '../pipeline/operations.ts';
import type { Config } from '../config.ts';
import { deliveryTags, type PurgeGenerations } from './derivatives.ts';
import { urlExpired } from './errors.ts';
import { makeDerivative, type MissDeps } from './miss.ts';
import { negotiate } from './negotiate.ts';
import { derivativeHash, resultCacheKey, type CachedResult, type ResultCache } from './result-cache.ts';
import { allowedOrigins, checkAllowedOrigin, verifyDeliveryPath } from './settings.ts';
import {
  deliveryPresetName,
  parseDeliveryRequest,
  PUBLIC_SIGNATURE,
  type DeliveryRequestPath,
} from './url.ts';
import { checkPublicPath, publicPolicyOf } from './public-policy.ts';
import { storedOverlayHash } from '../sources/overlay.ts';
import { presetResolver } from '../presets/index.ts';
import { findDeliverySigner, type DeliverySigner } from '../store/delivery.ts';

export interface DeliveryDeps extends MissDeps {
  config: MissDeps['config'] & Pick<Config, 'delivery'>;
  operations: ReturnType<typeof operationsSchema>;
  deliveryCache: ResultCache;
  deliveryPurges: PurgeGenerations;
}

/** A delivery URL's answer: the image and what its headers say. */
export interface Delivered {
  image: CachedResult;
  /** hit: from the result cache (no unit); miss: made for this request. */
  cache: 'hit' | 'miss';
  /** DELIVERY_MAX_AGE_SECONDS, shortened so no cache keeps the image past the URL's exp:. */
  cacheControl: string;
  /** The account's and the source's tag (Cache-Tag, Surrogate-Key). */
  tags: { account: string; source: string };
  /** f:auto: the format follows the Accept header (Vary: Accept). */
  variesWithAccept: boolean;
}

function cacheControl(maxAgeSeconds: number, expiresAt: number | undefined): string {
  const untilExpiry = expiresAt === undefined ? Infinity : expiresAt - Math.floor(Date.now() / 1000);
  return `public, max-age=${Math.max(0, Math.min(maxAgeSeconds, untilExpiry))}`;
}

/**
 * The account of a URL: a signed one's signer, or for `_` the account whose public policy the URL lies inside
 * (charged like a signed URL's).
 */
async function accountOfPath(deps: DeliveryDeps, path: DeliveryRequestPath): Promise<DeliverySigner> {
  if (path.signature !== PUBLIC_SIGNATURE) return verifyDeliveryPath(deps.store.db, path);
  const signer = await findDeliverySigner(deps.store.db, path.accountId);
  const policy = signer && (await publicPolicyOf(deps.store.db, signer.accountId));
  checkPublicPath(signer, policy, path.signedPart);
  return signer;
}

/** The image of a delivery URL (its path split, the request's Accept header), from the cache or made now. */
export async function deliver(
  deps: DeliveryDeps,
  path: DeliveryRequestPath,
  accept: string | undefined,
): Promise<Delivered> {
  const signer = await accountOfPath(deps, path);
  // A preset is resolved into its operations, so the key below holds its content: a changed preset makes new
  // derivatives, with no purge.
  const presets = await presetResolver(deps.store.db, signer.accountId, deliveryPresetName(path.signedPart));
  const delivery = parseDeliveryRequest(path.signedPart, deps.operations, presets);
  if (delivery.expiresAt !== undefined && delivery.expiresAt < Date.now() / 1000) {
    throw urlExpired(delivery.expiresAt);
  }
  checkAllowedOrigin(allowedOrigins(signer), delivery.source);
  const negotiated = delivery.autoFormat ? negotiate(delivery.operations.formats, accept) : undefined;
  // A replaced overlay is new content: its hash in the key (and the charge) makes new derivatives, with no purge.
  const { overlay } = delivery.operations;
  const overlayHash = overlay && (await storedOverlayHash(deps.store.db, signer.accountId, overlay.name));
  const parts = {
    accountId: signer.accountId,
    source: delivery.source,
    options: overlayHash
      ? `${delivery.normalisedOptions}|overlay=${overlayHash}`
      : delivery.normalisedOptions,
    format: negotiated?.key ?? 'as-named',
    purges: await deps.deliveryPurges.of(signer.accountId, delivery.source),
  };
  const { result, fresh } = await deps.deliveryCache.getOrProduce(resultCacheKey(parts), () =>
    makeDerivative(deps, { signer, delivery, negotiated, derivative: derivativeHash(parts) }),
  );
  return {
    image: result,
    cache: fresh ? 'miss' : 'hit',
    cacheControl: cacheControl(deps.config.delivery.maxAgeSeconds, delivery.expiresAt),
    tags: deliveryTags(signer.accountId, delivery.source),
    variesWithAccept: delivery.autoFormat,
  };
}
