// owns: this instance's heartbeat and the periodic sweep, run by every instance, that refunds the quota units held
// by requests of instances that died (SIGKILL, OOM, a lost machine) while any instance runs.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { deleteInstance, deleteInstancesSilentSince, recordInstanceHeartbeat } from '../store/instances.ts';
import type { Db } from '../store/schema.ts';
import { refundAbandonedUnits } from './quota.ts';

export interface InstanceLiveness {
  /** This instance's id, written on each quota reservation it makes. */
  readonly id: string;
  /** One sweep now (the timer runs them too); resolves to the units it refunded (0 while it may not sweep yet). */
  sweep(): Promise<number>;
  /** Stops the timers and removes this instance's row: it holds no unit any more. */
  close(): Promise<void>;
}

export interface LivenessOptions {
  /** INSTANCE_DEAD_AFTER_MS: an instance silent this long is dead. */
  deadAfterMs: number;
  /** Longest a request can live: any reservation older than this is abandoned, whatever its instance. */
  longestRequestMs: number;
  /** Units refunded by a sweep (the metric). */
  onRefunded(units: number): void;
  now?: () => Date;
}

/** Heartbeats per dead-after period: an instance must miss five in a row to be taken for dead. */
const HEARTBEATS_PER_PERIOD = 6;
/**
 * Sweeps per dead-after period: a dead instance's units are refunded within 1.5 periods of its last heartbeat by
 * any instance that has been writing its own heartbeat for a period.
 */
const SWEEPS_PER_PERIOD = 2;

/**
 * The longest a request can live: reading it, fetching the URL through every redirect (each hop has its own
 * FETCH_TIMEOUT_MS), processing, a margin.
 */
export function longestRequestMs(
  config: Pick<Config, 'requestTimeoutMs' | 'fetchTimeoutMs' | 'maxRedirects' | 'processTimeoutMs'>,
): number {
  return (
    config.requestTimeoutMs +
    config.fetchTimeoutMs * (config.maxRedirects + 1) +
    config.processTimeoutMs +
    60_000
  );
}

/**
 * Registers this instance (first heartbeat, before it serves), then keeps its heartbeat and sweeps on timers.
 * A live instance's request is not swept while it may still deliver (its heartbeat stays fresh, and only a
 * reservation older than any request lives is taken regardless); were the instance cut off long enough to be
 * taken for dead, a 200 it still delivers is counted again (confirmQuotaUnit).
 */
export async function startInstanceLiveness(
  db: Db,
  log: Logger,
  options: LivenessOptions,
): Promise<InstanceLiveness> {
  const id = randomUUID();
  const now = options.now ?? (() => new Date());
  await recordInstanceHeartbeat(db, id, now().toISOString());
  log.info({ instanceId: id }, 'instance registered (its heartbeat tells the others it is alive)');

  /**
   * Since when every heartbeat of this instance has been written. It sweeps only after INSTANCE_DEAD_AFTER_MS of
   * them: after a database outage every heartbeat is stale, and the first instance back must give the others
   * time to write theirs before it takes them for dead.
   */
  let writingSince: number | undefined = now().getTime();
  let beating: Promise<void> | undefined;
  let sweeping: Promise<number> | undefined;
  const beat = () => {
    beating ??= recordInstanceHeartbeat(db, id, now().toISOString())
      .then(() => {
        writingSince ??= now().getTime();
      })
      .catch((err: unknown) => {
        writingSince = undefined;
        log.warn({ err }, 'instance heartbeat failed; will retry');
      })
      .finally(() => {
        beating = undefined;
      });
    return beating;
  };
  const sweepOnce = async () => {
    const at = now().getTime();
    if (writingSince === undefined || at - writingSince < options.deadAfterMs) return 0;
    const deadBefore = new Date(at - options.deadAfterMs);
    const refunded = await refundAbandonedUnits(db, {
      deadBefore,
      abandonedBefore: new Date(at - options.longestRequestMs),
    });
    await deleteInstancesSilentSince(db, deadBefore.toISOString());
    if (refunded > 0) {
      options.onRefunded(refunded);
      log.warn({ refunded }, 'refunded quota units held by requests of an instance that died');
    }
    return refunded;
  };
  const sweep = () => {
    sweeping ??= sweepOnce().finally(() => {
      sweeping = undefined;
    });
    return sweeping;
  };
  const sweepInBackground = () => {
    sweep().catch((err: unknown) => log.warn({ err }, 'abandoned quota units sweep failed; will retry'));
  };

  const heartbeatTimer = setInterval(() => void beat(), options.deadAfterMs / HEARTBEATS_PER_PERIOD);
  const sweepTimer = setInterval(sweepInBackground, options.deadAfterMs / SWEEPS_PER_PERIOD);
  heartbeatTimer.unref();
  sweepTimer.unref();

  return {
    id,
    sweep,
    async close() {
      clearInterval(heartbeatTimer);
      clearInterval(sweepTimer);
      await Promise.allSettled([beating, sweeping]);
      await deleteInstance(db, id).catch((err: unknown) =>
        log.warn({ err }, 'could not remove the instance row; the others will take it for dead'),
      );
    },
  };
}
