// Counting semaphores that never queue: a full limiter refuses at once (busy / fetch_busy).

/** How many slots are taken, for the metrics. */
export interface SlotGauge {
  readonly inFlight: number;
  readonly max: number;
}

export interface Limiter extends SlotGauge {
  /** Takes a slot and returns its release function, or undefined when every slot is taken. */
  tryAcquire(): (() => void) | undefined;
}

/** Returns a release function that frees its slot once, however often it is called. */
function releaseOnce(free: () => void): () => void {
  let released = false;
  return () => {
    if (released) return;
    released = true;
    free();
  };
}

export function createLimiter(max: number): Limiter {
  let inFlight = 0;
  return {
    tryAcquire() {
      if (inFlight >= max) return undefined;
      inFlight++;
      return releaseOnce(() => inFlight--);
    },
    get inFlight() {
      return inFlight;
    },
    max,
  };
}

/** Who asks for a shared slot, and whether the work costs them anything. */
export interface SlotClaim {
  /** The account the work is for. */
  holder: string;
  /** Work that costs its holder nothing (a free probe): all of it together holds at most a fair share. */
  free: boolean;
}

/** Why a shared slot was refused: every slot taken, the holder's share taken, or free work's share taken. */
export type SlotRefusal = 'all_taken' | 'holder_share' | 'free_share';

export type SharedSlot = { release: () => void } | { refused: SlotRefusal };

export interface SharedLimiter extends SlotGauge {
  tryAcquire(claim: SlotClaim): SharedSlot;
  /** The most slots one holder, or all free work together, may hold. */
  readonly share: number;
}

/** Half the slots, at least one: what one holder, or free work together, may hold of `max`. */
export function fairShare(max: number): number {
  return Math.max(1, Math.floor(max / 2));
}

/**
 * Slots shared between accounts: one holder never takes more than its fair share, so one account (or free probes,
 * which cost nothing to send) cannot take every slot and leave the others `busy`. With 1 slot the share is that slot.
 */
export function createSharedLimiter(max: number): SharedLimiter {
  const share = fairShare(max);
  const heldBy = new Map<string, number>();
  let inFlight = 0;
  let freeInFlight = 0;
  return {
    tryAcquire({ holder, free }) {
      if (inFlight >= max) return { refused: 'all_taken' };
      const held = heldBy.get(holder) ?? 0;
      if (held >= share) return { refused: 'holder_share' };
      if (free && freeInFlight >= share) return { refused: 'free_share' };
      inFlight++;
      heldBy.set(holder, held + 1);
      if (free) freeInFlight++;
      return {
        release: releaseOnce(() => {
          inFlight--;
          if (free) freeInFlight--;
          const left = (heldBy.get(holder) ?? 1) - 1;
          if (left === 0) heldBy.delete(holder);
          else heldBy.set(holder, left);
        }),
      };
    },
    get inFlight() {
      return inFlight;
    },
    max,
    share,
  };
}
