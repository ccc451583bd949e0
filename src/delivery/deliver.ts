// owns: answering one delivery URL: its signature checked first, then its options, expiry and source origin, the
// format negotiated, the derivative named by the output it produces (output-key.ts, source-facts.ts); served from
// the instance's result cache or made once (miss.ts).
import type { operationsSchema } from '../pipeline/operations.ts';
import type { Config } from '../config.ts';
import { deliveryTags, type PurgeGenerations } from './derivatives.ts';
import { urlExpired } from './errors.ts';
import { makeDerivative, type MissDeps } from './miss.ts';
import { negotiate } from './negotiate.ts';
import { outputOperations, outputOptions } from './output-key.ts';
import { placeholderAnswer, placeholderEncoding, placeholderOperations } from './placeholder-answer.ts';
import { derivativeHash, resultCacheKey, type CachedResult, type ResultCache } from './result-cache.ts';
import { allowedOrigins, checkAllowedOrigin, verifyDeliveryPath } from './settings.ts';
import { checkPublicPath, publicPolicyOf } from './public-policy.ts';
import { knownSize, type SourceFactsMemory } from './source-facts.ts';
import {
  deliveryPresetName,
  parseDeliveryRequest,
  PUBLIC_SIGNATURE,
  type DeliveryRequestPath,
} from './url.ts';
import { storedOverlayHash } from '../sources/overlay.ts';
import { presetResolver } from '../presets/index.ts';
import { findDeliverySigner, type DeliverySigner } from '../store/delivery.ts';

export interface DeliveryDeps extends MissDeps {
  config: MissDeps['config'] & Pick<Config, 'delivery'>;
  operations: ReturnType<typeof operationsSchema>;
  deliveryCache: ResultCache;
  deliveryPurges: PurgeGenerations;
  deliverySources: SourceFactsMemory;
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
  /** f:auto and placeholder:image: the format follows the Accept header (Vary: Accept). */
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
  const origins = allowedOrigins(signer);
  checkAllowedOrigin(origins, delivery.source);
  // A placeholder answer is made without the encode's options (placeholderOperations): nothing to negotiate.
  const negotiated =
    delivery.autoFormat && !delivery.placeholder ? negotiate(delivery.operations.formats, accept) : undefined;
  // A replaced overlay is new content: its hash in the key (and the charge) makes new derivatives, with no purge.
  const { overlay } = delivery.operations;
  const overlayHash = overlay && (await storedOverlayHash(deps.store.db, signer.accountId, overlay.name));
  const purges = await deps.deliveryPurges.of(signer.accountId, delivery.source);
  // The derivative is keyed by its output, which needs the source's size: learnt by the source's first request.
  const version = { accountId: signer.accountId, source: delivery.source, version: delivery.version, purges };
  const checkUrl = (url: URL) => checkAllowedOrigin(origins, url.href);
  const known = await deps.deliverySources.find(version);
  const { facts, input } = known
    ? { facts: known, input: undefined }
    : await deps.deliverySources.learn(deps, version, checkUrl);
  const operationsFor = (size: ReturnType<typeof knownSize>) => {
    const output = outputOperations(delivery.operations, size);
    return delivery.placeholder ? placeholderOperations(output) : output;
  };
  const operations = operationsFor(knownSize(facts));
  const options = outputOptions(operations, delivery.version, delivery.placeholder);
  const encoding = delivery.placeholder === 'image' ? placeholderEncoding(accept) : undefined;
  const format = negotiated?.key ?? 'as-named';
  const parts = {
    accountId: signer.accountId,
    source: delivery.source,
    options: overlayHash ? `${options}|overlay=${overlayHash}` : options,
    format: encoding ? `${format}|placeholder-${encoding}` : format,
    purges,
  };
  // Bytes a make fetches of another length than the source had: the source changed, its size is learnt anew.
  const operationsOf = async (bytes: Buffer) => {
    const now = await deps.deliverySources.relearn(deps, version, bytes);
    return now.bytes === facts.bytes ? operations : operationsFor(knownSize(now));
  };
  const { result, fresh } = await deps.deliveryCache.getOrProduce(resultCacheKey(parts), async () => {
    const image = await makeDerivative(deps, {
      signer,
      delivery: { ...delivery, operations },
      negotiated,
      derivative: derivativeHash(parts),
      ...(input ? { input } : { operationsOf }),
    });
    return delivery.placeholder ? placeholderAnswer(image, delivery.placeholder, encoding ?? 'png') : image;
  });
  return {
    image: result,
    cache: fresh ? 'miss' : 'hit',
    cacheControl: cacheControl(deps.config.delivery.maxAgeSeconds, delivery.expiresAt),
    tags: deliveryTags(signer.accountId, delivery.source),
    variesWithAccept: negotiated !== undefined || encoding !== undefined,
  };
}
