// owns: a delivery miss: one make of a derivative by the image job (src/job/) from the URL's source, charged per
// derivative and month, refused when larger than the cache keeps, and remembered when it fails.
import type { Logger } from 'pino';
import { usageMonth } from '../accounts/quota.ts';
import { takeQuotaUnit, type QuotaUnit, type QuotaUnitDeps } from '../accounts/quota-unit.ts';
import { runJob, type Charge, type JobDeps, type Reservation } from '../job/index.ts';
import type { Operations } from '../pipeline/operations.ts';
import type { ProcessedImage } from '../pipeline/process.ts';
import type { UrlRef } from '../sources/url.ts';
import { countDeliveryMake, releaseDeliveryMake, type DeliverySigner } from '../store/delivery.ts';
import { negotiatedOperations } from './auto-format.ts';
import { makeCountsUnit } from './derivatives.ts';
import { deliveryFetchError, resultTooLarge } from './errors.ts';
import { answerFromMemory, forgetFailure, rememberFailure } from './failure-memory.ts';
import type { Negotiation } from './negotiate.ts';
import type { ResultCache } from './result-cache.ts';
import { allowedOrigins, checkAllowedOrigin, recordDeliveryImage } from './settings.ts';
import type { DeliveryRequest } from './url.ts';

export interface MissDeps extends JobDeps, QuotaUnitDeps {
  config: JobDeps['config'] & QuotaUnitDeps['config'];
  deliveryCache: Pick<ResultCache, 'largestEntryBytes'>;
  log: Pick<Logger, 'warn'>;
}

/** One derivative to make: whose URL, what it says, what `f:auto` is for this request, and the derivative's name. */
export interface Miss {
  signer: DeliverySigner;
  delivery: DeliveryRequest;
  /** What `f:auto` is for this request; undefined for a URL that names its format (or none). */
  negotiated: Negotiation | undefined;
  derivative: string;
  /** The source's bytes, when this request fetched them to learn the source (they are not fetched twice). */
  input?: Buffer;
  /** The operations for fetched bytes: another length than the source had learns it anew (source-facts.ts). */
  operationsOf?(input: Buffer): Promise<Operations>;
}

/**
 * What a make costs. A derivative whose last make failed answers that failure from memory while it lasts
 * (failure-memory.ts). Otherwise the make is counted in the store: the first of the month, on any instance, reserves
 * a unit, and so does every MAKES_PER_UNIT-th after it (a unit buys that many makes, evictions and instances
 * included); the unit counts once the image exists (it is cached and later requests are free, so a client leaving
 * early does not get it refunded). A result larger than the cache keeps is refused with 413 rather than made on
 * every view. On every failure the unit is refunded and the make taken back, and a failure the derivative causes is
 * remembered.
 */
function derivativeCharge(deps: MissDeps, signer: DeliverySigner, derivative: string): Charge {
  const db = deps.store.db;
  const account = signer.accountId;
  return {
    async reserve(): Promise<Reservation> {
      const lastFailure = await answerFromMemory(db, account, derivative);
      const now = new Date();
      const month = usageMonth(now);
      const makes = await countDeliveryMake(db, account, month, derivative, now.toISOString());
      let unit: QuotaUnit | undefined;
      const failed = async (failure: unknown) => {
        const err = deliveryFetchError(failure);
        await unit?.refund();
        // The answer is the failure's; a make left counted (store down) only makes a later one free.
        await releaseDeliveryMake(db, account, month, derivative).catch((cause: unknown) =>
          deps.log.warn({ err: cause }, 'delivery: taking back the make of a failed derivative failed'),
        );
        return rememberFailure(db, account, derivative, err, lastFailure).catch((cause: unknown) => {
          deps.log.warn({ err: cause }, 'delivery: remembering a failed derivative failed');
          return err;
        });
      };
      try {
        if (makeCountsUnit(makes)) unit = await takeQuotaUnit(deps, signer);
      } catch (err) {
        throw await failed(err);
      }
      return {
        failed,
        async made(image: ProcessedImage) {
          const largest = deps.deliveryCache.largestEntryBytes;
          if (largest > 0 && image.data.length > largest) throw resultTooLarge(image.data.length, largest);
          if (unit) {
            await unit.count();
            await recordDeliveryImage(db, account);
          }
          if (lastFailure) await forgetFailure(db, account, derivative);
        },
      };
    },
  };
}

/**
 * How long a delivery miss waits in line for a fetch slot and then a job slot. A page's first view asks for more new
 * images at once than there are slots, and a browser shows a 503 as a broken image; a POST is still refused at once.
 */
export const DELIVERY_SLOT_PATIENCE_MS = 10_000;

/**
 * Makes the derivative. A make that counts no unit still takes a fetch slot of the account's share, a job slot and
 * every size limit; the allowed origins hold for every hop of the fetch (a redirect cannot take it elsewhere).
 */
export async function makeDerivative(deps: MissDeps, miss: Miss): Promise<ProcessedImage> {
  const { signer, delivery, negotiated, operationsOf } = miss;
  const origins = allowedOrigins(signer);
  const source: UrlRef = { kind: 'url', url: delivery.source };
  const { image } = await runJob(deps, {
    account: signer.accountId,
    charge: derivativeCharge(deps, signer, miss.derivative),
    request: () => ({ source, operations: delivery.operations }),
    input: miss.input,
    operationsFor: async (input, operations) => {
      const ops = operationsOf ? await operationsOf(input) : operations;
      return negotiated ? negotiatedOperations(ops, negotiated, input, deps.config) : ops;
    },
    checkUrl: (url) => checkAllowedOrigin(origins, url.href),
    // The result serves every later request of this key, so it is finished even when this client leaves.
    signal: new AbortController().signal,
    patienceMs: DELIVERY_SLOT_PATIENCE_MS,
    // A placeholder answer reads the output's pixels only: its make encodes nothing.
    placeholderOnly: delivery.placeholder !== undefined,
  });
  return image;
}
