import {
  GET_MAX_RETRY_AFTER_MS,
  getPolicy,
  POST_MAX_RETRY_AFTER_MS,
  postPolicy,
  RETRY_FACTOR,
  type RetryPolicy,
} from '../agent/retry-policies.js';
import { SLACK_CALL_TIMEOUT_MS } from '../slack/client-options.js';

/**
 * How long a claim or hold on work lasts, and the longest call it guards. Both in milliseconds;
 * the lease is timed by the store's clock, the call by this process's monotonic clock.
 */
export interface Lease {
  /** The longest the guarded call (retries and their waits included) can take. */
  callMs: number;
  /** How long the claim or hold lasts: the call, and a margin to get from the claim to the call. */
  leaseMs: number;
}

/** The leases of every kind of work, derived from the configuration in {@link leasesFor}. */
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

/**
 * The longest an agent API request can take with its retries: every attempt up to the time-out,
 * and between attempts the longest backoff (randomised up to twice its base) and Retry-After.
 */
export function longestAgentCallMs(timeoutMs: number, policy: RetryPolicy, maxRetryAfterMs: number): number {
  let total = (policy.retries + 1) * timeoutMs;
  for (let retry = 0; retry < policy.retries; retry++) {
    total += Math.min(2 * policy.minTimeoutMs * RETRY_FACTOR ** retry, policy.maxTimeoutMs) + maxRetryAfterMs;
  }
  return total;
}

const lease = (callMs: number): Lease => ({
  callMs,
  leaseMs: callMs + Math.max(MIN_MARGIN_MS, Math.ceil(callMs / 4)),
});

/**
 * Every lease, from the agent API time-out (`DOCS_AGENT_API_TIMEOUT_MS`) and the fixed Slack call
 * time-out and retry policies: a claim lasts as long as the work it guards, whatever that is.
 */
export function leasesFor(agentTimeoutMs: number): Leases {
  return {
    agentWrite: lease(longestAgentCallMs(agentTimeoutMs, postPolicy, POST_MAX_RETRY_AFTER_MS)),
    agentRead: lease(longestAgentCallMs(agentTimeoutMs, getPolicy, GET_MAX_RETRY_AFTER_MS)),
    delivery: lease(SLACK_CALL_TIMEOUT_MS),
  };
}

/** Thrown when the store answers renewals so slowly that no call can start inside the lease. */
export class HoldTooSlowError extends Error {
  override name = 'HoldTooSlowError';
}

const MAX_RENEWALS = 5;

/**
 * Makes sure this instance's hold on work covers a call about to start that must not be made
 * twice: the call can start only if the hold has the whole call still ahead of it. A hold granted
 * at `grantedAt` (monotonic ms, read before the claim was asked for; the store's lease started
 * later) is used if it has; otherwise the hold is renewed (in the store, by its clock). False
 * when the work is no longer this instance's: the caller must not make the call. The monotonic
 * clock keeps counting while the process is frozen, so a process resumed after its lease ran
 * out renews (and learns it lost the work) instead of calling.
 */
export async function readyForCall(
  held: Lease,
  renew: () => Promise<boolean>,
  grantedAt: number | undefined,
  monotonic: () => number = () => performance.now(),
): Promise<boolean> {
  let since = grantedAt;
  for (let renewals = 0; ; renewals++) {
    if (since !== undefined && monotonic() - since + held.callMs <= held.leaseMs) return true;
    if (renewals === MAX_RENEWALS) throw new HoldTooSlowError('the store renewed a hold too slowly to call');
    const asked = monotonic();
    if (!(await renew())) return false;
    since = asked;
  }
}
