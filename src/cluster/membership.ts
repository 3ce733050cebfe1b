import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from '../logging/logger.js';
import type { ClusterStore, Orphans, StoreLifecycle } from '../store/types.js';
import { createLoop } from '../util/loop.js';

export interface MembershipOptions {
  store: Pick<ClusterStore, 'takeOverOrphans' | 'heartbeat' | 'liveInstances' | 'retireInstance'> &
    Pick<StoreLifecycle, 'shared'>;
  instanceId: string;
  /**
   * On a shared store, an instance not heard from for this long (milliseconds) is taken for dead
   * and its work is taken over. Heartbeats go out three times per period.
   */
  timeoutMs: number;
  logger: Logger;
  /**
   * Receives what a stopped instance left half done (or a busy one handed back), now this
   * instance's to finish.
   */
  onOrphans(orphans: Orphans): void;
  /** Whether this instance can take work over now; when false the round is skipped. Default: always. */
  canTakeOver?: () => boolean;
  /**
   * Told, at every heartbeat, how far this host's clock is from the store's (the store's minus
   * this one's, in milliseconds): for the metrics endpoint.
   */
  onClockOffset?: (offsetMs: number) => void;
  /** This host's clock: only compared with the store's, never used to decide who owns what. */
  now?: () => number;
}

/**
 * How far this host's clock may be from the store's before it is logged: a quarter of the
 * instance time-out. Ownership does not depend on it (the store's clock decides); a host clock
 * that far off still makes due times and logs misleading, and says its time service has failed.
 */
export const clockWarningMs = (timeoutMs: number) => timeoutMs / 4;
/** The warning is repeated at most this often (by this host's clock) while the offset lasts. */
export const CLOCK_WARNING_EVERY_MS = 10 * 60_000;

/** A unique id for this process: the host and pid say where it ran, the suffix tells restarts apart. */
export function newInstanceId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

export interface Membership {
  /** Registers this instance and takes over what stopped instances left; before serving. */
  join(): Promise<void>;
  /** Keeps heartbeating and watching for instances that stop. */
  start(): void;
  /**
   * Stops heartbeating and forgets this instance, releasing its claims for the others. With
   * `callsUnderWay` (work did not finish in time), its claims on the work those calls are for
   * stay until they run out.
   */
  leave(options?: { callsUnderWay?: boolean }): Promise<void>;
  /** Instances sharing the store, this one included, as of the last heartbeat (at least 1). */
  liveCount(): number;
}

/**
 * This process's place among the instances that share the store. Each instance heartbeats; work
 * half done by one that stopped heartbeating (by the store's clock) is taken over by exactly one
 * other. On a store only one process uses (SQLite), every other instance on record is an earlier
 * run of this bot, so its work is taken over at once.
 */
export function createMembership(options: MembershipOptions): Membership {
  const { store, instanceId, logger } = options;
  const now = options.now ?? Date.now;

  let live = 1;
  /** The take-over in progress, if any: it never holds up the next heartbeat. */
  let takingOver: Promise<void> | undefined;

  /** When the clock warning was last logged (this host's clock); undefined: never. */
  let warnedAt: number | undefined;
  /**
   * Records this host's offset from the store's clock: the store's time of the heartbeat minus
   * the middle of the round trip that carried it; off by at most half the round trip.
   */
  function measure(storeTime: number, before: number, after: number): void {
    const offsetMs = storeTime - (before + after) / 2;
    options.onClockOffset?.(offsetMs);
    const certainMs = Math.abs(offsetMs) - (after - before) / 2;
    if (certainMs <= clockWarningMs(options.timeoutMs)) return;
    if (warnedAt !== undefined && Math.abs(after - warnedAt) < CLOCK_WARNING_EVERY_MS) return;
    warnedAt = after;
    logger.warn('this host’s clock is far from the database’s; check its time service', {
      offsetMs: Math.round(offsetMs),
      roundTripMs: Math.round(after - before),
      thresholdMs: clockWarningMs(options.timeoutMs),
    });
  }

  async function takeOver(): Promise<void> {
    if (options.canTakeOver && !options.canTakeOver()) return;
    const orphans = await store.takeOverOrphans(instanceId, options.timeoutMs);
    if (orphans.jobs.length === 0 && orphans.runs.length === 0) return;
    logger.warn('taking over work a stopped instance left half done, or a busy one handed back', {
      jobs: orphans.jobs.map((j) => j.id),
      runs: orphans.runs.map((r) => r.id),
    });
    options.onOrphans(orphans);
  }

  /** Heartbeats, then looks for stopped instances' work (in the background when `wait` is false). */
  async function beat(wait: boolean): Promise<void> {
    // Who is alive, and whose work may be taken over, is decided by the store with its own clock;
    // this host's clock is only measured against it.
    const before = now();
    const storeTime = await store.heartbeat(instanceId);
    measure(storeTime, before, now());
    live = store.shared ? Math.max(1, await store.liveInstances(options.timeoutMs)) : 1;
    if (takingOver) return;
    takingOver = takeOver()
      .catch((error) => logger.error('taking over a stopped instance’s work failed; will retry', { error }))
      .finally(() => {
        takingOver = undefined;
      });
    if (wait) await takingOver;
  }

  const loop = createLoop({
    name: 'membership',
    logger,
    idleMs: Math.max(100, Math.floor(options.timeoutMs / 3)),
    async step() {
      await beat(false);
      return { busy: false };
    },
  });

  return {
    async join() {
      await beat(true);
      logger.info('instance joined', { instanceId, sharedStore: store.shared });
    },
    start: () => loop.start(),
    liveCount: () => live,
    async leave(leaving = {}) {
      await loop.stop();
      await takingOver;
      await store.retireInstance(instanceId, { callsUnderWay: leaving.callsUnderWay === true });
    },
  };
}

/**
 * How long a claim on work lasts, and the longest call it guards. Both in milliseconds;
 * the lease is timed by the store's clock, the call by this process's monotonic clock.
 */
export interface Lease {
  /** The longest the guarded call (retries and their waits included) can take. */
  callMs: number;
  /** How long the claim lasts: the call, and a margin to get from the claim to the call. */
  leaseMs: number;
}

/** The leases of every kind of work, derived from the configuration by `leasesFor` in `jobs/job-context.ts`. */
export interface Leases {
  /** A job create or a follow-up: agent API POSTs, which must never be made twice. */
  agentWrite: Lease;
  /** A poll: agent API GETs (safe to repeat; the claim keeps two instances from polling at once). */
  agentRead: Lease;
  /**
   * A delivery: one Slack call. The claim is renewed before each post, so it need not cover the
   * delivery's other calls (a look for an earlier copy, a reaction swap).
   */
  delivery: Lease;
}

/** The least margin between a claim and the call it guards: a store round trip and the work between them. */
const MIN_MARGIN_MS = 2_000;

/** A claim on a call that takes at most `callMs`: the call, and a margin to get from the claim to it. */
export const leaseFor = (callMs: number): Lease => ({
  callMs,
  leaseMs: callMs + Math.max(MIN_MARGIN_MS, Math.ceil(callMs / 4)),
});

/** Thrown when the store answers renewals so slowly that no call can start inside the lease. */
export class RenewalTooSlowError extends Error {
  override name = 'RenewalTooSlowError';
}

const MAX_RENEWALS = 5;

/**
 * Makes sure this instance's claim on work covers a call about to start that must not be made
 * twice: the call can start only if the claim has the whole call still ahead of it. A claim granted
 * at `grantedAt` (monotonic ms, read before the claim was asked for; the store's lease started
 * later) is used if it has; otherwise the claim is renewed (in the store, by its clock). False
 * when the work is no longer this instance's: the caller must not make the call. The monotonic
 * clock keeps counting while the process is frozen, so a process resumed after its lease ran
 * out renews (and learns it lost the work) instead of calling.
 */
export async function readyForCall(
  lease: Lease,
  renew: () => Promise<boolean>,
  grantedAt: number | undefined,
  monotonic: () => number = () => performance.now(),
): Promise<boolean> {
  let since = grantedAt;
  for (let renewals = 0; ; renewals++) {
    if (since !== undefined && monotonic() - since + lease.callMs <= lease.leaseMs) return true;
    if (renewals === MAX_RENEWALS)
      throw new RenewalTooSlowError('the store renewed a claim too slowly to call');
    const asked = monotonic();
    if (!(await renew())) return false;
    since = asked;
  }
}
