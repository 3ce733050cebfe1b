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
