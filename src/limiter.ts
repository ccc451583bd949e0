// A counting semaphore that never queues: a full limiter refuses at once (busy / fetch_busy).
export interface Limiter {
  /** Takes a slot and returns its release function, or undefined when every slot is taken. */
  tryAcquire(): (() => void) | undefined;
  readonly inFlight: number;
  readonly max: number;
}

export function createLimiter(max: number): Limiter {
  let inFlight = 0;
  return {
    tryAcquire() {
      if (inFlight >= max) return undefined;
      inFlight++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        inFlight--;
      };
    },
    get inFlight() {
      return inFlight;
    },
    max,
  };
}
