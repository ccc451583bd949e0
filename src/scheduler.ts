// owns: the scheduler of heavy work. Every piece of work that decodes with libvips or fetches a URL takes a slot of
// one of its two pools (jobs: MAX_CONCURRENT_JOBS; fetches: MAX_CONCURRENT_FETCHES) for an account, and the pool
// decides who gets a full pool's slot by the accounts' recent cost, not by arrival (docs/security.md, "Fair shares").

/** What a slot is for: an image job, an info probe's header read, an overlay upload's inspection, a URL fetch. */
export type WorkKind = 'job' | 'probe' | 'overlay' | 'fetch';

/** How many slots are taken, for the metrics. */
export interface SlotGauge {
  readonly inFlight: number;
  readonly max: number;
}

/** Who asks for a slot, for what, and whether the work can be stopped to make room for someone else. */
export interface SlotClaim {
  /** The account the work is charged to (a delivery URL's account for anonymous views). */
  account: string;
  kind: WorkKind;
  /** Work that costs its account no unit (a free probe's fetch): all of it together holds at most `freeMax`. */
  free?: boolean;
  /**
   * Stops the work at once so that its slot can go to a much lighter account; the work then answers busy (or
   * fetch_busy) and refunds its unit. Absent for work that cannot be stopped (libvips in this process).
   */
  onPreempt?: () => void;
  /**
   * How long the claim may wait in line when it is kept out (a delivery view: a browser does not retry a 503, so a
   * page's first view of more new images than slots would show broken ones). Freed slots go to the lightest waiter.
   */
  patienceMs?: number;
}

/** Why a slot was refused: every slot taken, the account's own share taken, or free work's share taken. */
export type SlotRefusal = 'all_taken' | 'holder_share' | 'free_share';

export type SlotGrant = { release: () => void } | { refused: SlotRefusal };

export interface SlotPool extends SlotGauge {
  /**
   * A slot now, one taken from a much heavier account's stoppable work, or (for a much lighter account, when the
   * heavier work cannot be stopped) the next one freed within `waitMs`, or within the claim's own `patienceMs`; else
   * refused at once. `release` charges the time held
   * to the account and may be called any number of times.
   */
  acquire(claim: SlotClaim): Promise<SlotGrant>;
  /**
   * True when the account's recent cost is over its equal share of all recent cost in this pool (and over the
   * margin): its work should run where it can be stopped.
   */
  overShare(account: string): boolean;
  /** The account's recent cost: decayed slot-seconds, the slots it holds now included. */
  recentCost(account: string): number;
  /** The most slots one account holds (`perAccount`), for busy messages. */
  readonly share: number;
}

export interface SlotPoolOptions {
  max: number;
  /** The most slots one account may hold; `max` when absent. */
  perAccount?: number;
  /** The most slots free work may hold together; `max` when absent. */
  freeMax?: number;
  /** How long a much lighter account waits for a slot held by work that cannot be stopped; 0: never waits. */
  waitMs?: number;
  /** The most claims waiting in line at once (one account at most half of them); `4 × max` when absent. */
  maxWaiting?: number;
  /** The half-life of recent cost. */
  halfLifeMs?: number;
  /** Milliseconds, monotonic; tests pass their own clock. */
  now?: () => number;
}

/** Recent cost halves every 30 s: a burst is forgotten within about two minutes. */
export const COST_HALF_LIFE_MS = 30_000;

/**
 * How much more recent cost (slot-seconds) makes an account "much heavier" than another: one second of one slot.
 * Accounts within it are never stopped or made to wait for each other, so equal accounts do not take turns stopping
 * each other's work, and nobody under it is ever stopped.
 */
export const COST_MARGIN_SECONDS = 1;

/** How long a much lighter account waits for a job slot held by work that cannot be stopped. */
export const JOB_SLOT_WAIT_MS = 1000;

/** Costs below this are forgotten (the account counts as idle). */
const FORGOTTEN_SECONDS = 0.01;

/** Half the slots, at least one: what one account, or free work together, may hold of `max` fetch slots. */
export function fairShare(max: number): number {
  return Math.max(1, Math.floor(max / 2));
}

interface Hold {
  claim: SlotClaim;
  startedAt: number;
}

interface Waiter {
  claim: SlotClaim;
  grant: (hold: Hold | undefined) => void;
}

/** True when `heavy` is much heavier than `light`: more than COST_MARGIN_SECONDS more recent cost. */
export function muchHeavier(heavy: number, light: number): boolean {
  return heavy > light + COST_MARGIN_SECONDS;
}

export function createSlotPool(options: SlotPoolOptions): SlotPool {
  const { max } = options;
  const perAccount = options.perAccount ?? max;
  const freeMax = options.freeMax ?? max;
  const waitMs = options.waitMs ?? 0;
  const maxWaiting = options.maxWaiting ?? 4 * max;
  const waitingPerAccount = fairShare(maxWaiting);
  const halfLifeMs = options.halfLifeMs ?? COST_HALF_LIFE_MS;
  const now = options.now ?? (() => performance.now());
  const holds = new Set<Hold>();
  const waiters: Waiter[] = [];
  /** Charged slot-seconds per account, as of `at`. */
  const charged = new Map<string, { seconds: number; at: number }>();
  /** When each account last asked: it shares the pool for two half-lives after, even at no cost yet. */
  const askedAt = new Map<string, number>();
  const asks = (account: string, t: number) => {
    askedAt.set(account, t);
    for (const [other, at] of askedAt) if (t - at > 2 * halfLifeMs) askedAt.delete(other);
  };

  const decayed = (entry: { seconds: number; at: number }, t: number) =>
    entry.seconds * 2 ** (-(t - entry.at) / halfLifeMs);

  function recentCost(account: string, t = now()): number {
    const entry = charged.get(account);
    let cost = entry ? decayed(entry, t) : 0;
    for (const hold of holds) if (hold.claim.account === account) cost += (t - hold.startedAt) / 1000;
    return cost;
  }

  function charge(hold: Hold, t: number) {
    const account = hold.claim.account;
    const entry = charged.get(account);
    charged.set(account, {
      seconds: (entry ? decayed(entry, t) : 0) + (t - hold.startedAt) / 1000,
      at: t,
    });
    // Forget idle accounts so the map stays the size of the recent ones.
    for (const [other, e] of charged) if (decayed(e, t) < FORGOTTEN_SECONDS) charged.delete(other);
  }

  const heldBy = (account: string) => [...holds].filter((h) => h.claim.account === account).length;
  const freeHeld = () => [...holds].filter((h) => h.claim.free).length;

  /** Which limit keeps `claim` out now, if any. */
  function refusal(claim: SlotClaim): SlotRefusal | undefined {
    if (perAccount < max && heldBy(claim.account) >= perAccount) return 'holder_share';
    if (claim.free && freeHeld() >= freeMax) return 'free_share';
    if (holds.size >= max) return 'all_taken';
    return undefined;
  }

  function take(claim: SlotClaim): Hold {
    const hold = { claim, startedAt: now() };
    holds.add(hold);
    return hold;
  }

  /** Ends a hold, charging its time; false when it had ended already. */
  function stop(hold: Hold): boolean {
    if (!holds.delete(hold)) return false;
    charge(hold, now());
    return true;
  }

  /** Ends a hold and gives its slot to the lightest waiter that may take it. */
  function end(hold: Hold) {
    if (!stop(hold)) return;
    const t = now();
    const admissible = waiters
      .filter((w) => refusal(w.claim) === undefined)
      .sort((a, b) => recentCost(a.claim.account, t) - recentCost(b.claim.account, t));
    const next = admissible[0];
    if (next) {
      waiters.splice(waiters.indexOf(next), 1);
      next.grant(take(next.claim));
    }
  }

  const granted = (hold: Hold): SlotGrant => ({ release: () => end(hold) });

  function overShare(account: string, t: number): boolean {
    asks(account, t);
    const accounts = new Set([...charged.keys(), ...askedAt.keys()]);
    let total = 0;
    for (const a of accounts) total += recentCost(a, t);
    const cost = recentCost(account, t);
    return cost > COST_MARGIN_SECONDS && cost > total / accounts.size;
  }

  async function acquire(claim: SlotClaim): Promise<SlotGrant> {
    asks(claim.account, now());
    const refused = refusal(claim);
    if (refused === undefined) return granted(take(claim));
    const patienceMs = claim.patienceMs ?? 0;
    if (refused === 'holder_share')
      return patienceMs > 0 ? waitInLine(claim, patienceMs, refused) : { refused };
    const t = now();
    const cost = recentCost(claim.account, t);
    // The holders whose slot, once free, would let this claim in: any other account's, or free work's only.
    const blocking = [...holds].filter(
      (h) => h.claim.account !== claim.account && (refused === 'all_taken' || h.claim.free),
    );
    const heavier = blocking
      .map((hold) => ({ hold, cost: recentCost(hold.claim.account, t) }))
      .filter((h) => muchHeavier(h.cost, cost))
      // The heaviest account first; of its work, the latest started (the least work thrown away).
      .sort((a, b) => b.cost - a.cost || b.hold.startedAt - a.hold.startedAt);
    const stoppable = heavier.find((h) => h.hold.claim.onPreempt);
    if (stoppable) {
      // Its slot goes to this claim (which that slot alone kept out), not to a waiter.
      stop(stoppable.hold);
      stoppable.hold.claim.onPreempt?.();
      return granted(take(claim));
    }
    // Work that cannot be stopped ends soon (allow-listed jobs, header reads): an account much lighter than a holder
    // waits for it, and the freed slot goes to the lightest waiter, never to the heavier account asking again. Any
    // other claim without patience of its own is refused at once, as the API says.
    const wait = Math.max(patienceMs, heavier.length > 0 ? waitMs : 0);
    return wait > 0 ? waitInLine(claim, wait, refused) : { refused };
  }

  /** Waits up to `ms` for a freed slot; refused at once when the line (or the account's half of it) is full. */
  async function waitInLine(claim: SlotClaim, ms: number, refused: SlotRefusal): Promise<SlotGrant> {
    const own = waiters.filter((w) => w.claim.account === claim.account).length;
    if (waiters.length >= maxWaiting || own >= waitingPerAccount) return { refused };
    const hold = await new Promise<Hold | undefined>((resolve) => {
      const waiter: Waiter = { claim, grant: resolve };
      waiters.push(waiter);
      setTimeout(() => {
        const at = waiters.indexOf(waiter);
        if (at < 0) return;
        waiters.splice(at, 1);
        resolve(undefined);
      }, ms).unref();
    });
    return hold ? granted(hold) : { refused };
  }

  return {
    acquire,
    overShare: (account) => overShare(account, now()),
    recentCost: (account) => recentCost(account),
    get inFlight() {
      return holds.size;
    },
    max,
    share: perAccount,
  };
}
