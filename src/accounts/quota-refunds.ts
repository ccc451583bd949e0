// Refunds that must not be lost when the store is briefly unavailable: a failed refund is kept and retried
// with backoff until the store answers again, so the count in the store ends equal to the 200s answered.
import type { Logger } from 'pino';
import type { Db } from '../store/schema.ts';
import { isStoreUnavailableError } from '../store/errors.ts';
import { refundQuotaUnit, type QuotaReservation } from './quota.ts';

export interface QuotaRefunds {
  /** Refunds now; when the store is unavailable, keeps the refund for a later retry and resolves. */
  refund(reservation: QuotaReservation): Promise<void>;
  /** Refunds still waiting for the store. */
  pending(): number;
  /** Stops retrying after one last attempt; logs any refund that could not be applied. */
  close(): Promise<void>;
}

export interface QuotaRefundOptions {
  firstRetryMs?: number;
  maxRetryMs?: number;
}

export function createQuotaRefunds(db: Db, log: Logger, options: QuotaRefundOptions = {}): QuotaRefunds {
  const firstRetryMs = options.firstRetryMs ?? 250;
  const maxRetryMs = options.maxRetryMs ?? 5000;
  const waiting: QuotaReservation[] = [];
  let delayMs = firstRetryMs;
  let timer: NodeJS.Timeout | undefined;
  /** The retry in progress: close() waits for it so no refund is applied twice. */
  let retrying: Promise<void> | undefined;
  let closed = false;

  /** Applies waiting refunds in order; stops at the first one the store cannot take yet. */
  async function flush(): Promise<void> {
    while (waiting.length > 0) {
      const next = waiting[0] as QuotaReservation;
      try {
        await refundQuotaUnit(db, next);
      } catch (err) {
        if (isStoreUnavailableError(err)) return;
        log.error({ err, accountId: next.accountId, month: next.month }, 'quota refund failed; dropped');
      }
      waiting.shift();
    }
  }

  function schedule(): void {
    if (timer || closed || waiting.length === 0) return;
    timer = setTimeout(() => {
      timer = undefined;
      const before = waiting.length;
      retrying = flush()
        .catch((err: unknown) => log.error({ err }, 'quota refund retry failed'))
        .finally(() => {
          retrying = undefined;
          delayMs = waiting.length < before ? firstRetryMs : Math.min(delayMs * 2, maxRetryMs);
          schedule();
        });
    }, delayMs);
    timer.unref();
  }

  return {
    async refund(reservation) {
      try {
        await refundQuotaUnit(db, reservation);
      } catch (err) {
        if (!isStoreUnavailableError(err) || closed) throw err;
        log.warn({ accountId: reservation.accountId }, 'store unavailable; quota refund kept for retry');
        waiting.push(reservation);
        schedule();
      }
    },
    pending: () => waiting.length,
    async close() {
      closed = true;
      clearTimeout(timer);
      timer = undefined;
      await retrying;
      await flush();
      for (const lost of waiting.splice(0)) {
        log.error({ accountId: lost.accountId, month: lost.month }, 'quota refund lost at shutdown');
      }
    },
  };
}
