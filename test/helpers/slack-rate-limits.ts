/**
 * Slack's Web API rate limits, for the Slack stand-in (`startSlackStandIn({ rateLimits })`): a
 * token bucket per method and workspace (per channel for `chat.postMessage`), refilled at the
 * method's published rate and holding a short burst. A call that finds no token is answered as
 * Slack answers it, HTTP 429 with `Retry-After` (whole seconds until a token is there, at least 1)
 * and `{ ok: false, error: 'ratelimited' }`, and is not processed.
 *
 * Tiers as Slack's method reference gives them (docs.slack.dev/reference/methods, the same table
 * Slack's own SDKs carry): Tier 2 is 20+ calls a minute, Tier 3 50+, Tier 4 100+; `chat.postMessage`
 * is "special": about one message a second per channel, short bursts allowed. Its workspace-wide
 * limit is unpublished and not modelled. Methods left out of a table are not limited (`auth.test`,
 * whose special limit is far above what a bot calls it for, among them).
 */

/** A method's limit: calls a minute, and how many may come at once (the bucket's size). */
export interface RateLimit {
  perMinute: number;
  burst: number;
  /** One bucket per channel (`chat.postMessage`), not one for the workspace. */
  perChannel?: boolean;
}

/** Method name → its limit; methods not named are not limited. */
export type RateLimitTable = Readonly<Record<string, RateLimit>>;

/** A burst of ten seconds' worth of the tier's rate, at least 3. */
const tier = (perMinute: number): RateLimit => ({
  perMinute,
  burst: Math.max(3, Math.floor(perMinute / 6)),
});
const TIER_2 = tier(20);
const TIER_3 = tier(50);
const TIER_4 = tier(100);

/** The published limits of the methods the stand-in answers. */
export const SLACK_RATE_LIMITS: RateLimitTable = {
  'chat.postMessage': { perMinute: 60, burst: 3, perChannel: true },
  'chat.update': TIER_3,
  'chat.postEphemeral': TIER_4,
  'reactions.add': TIER_3,
  'reactions.remove': TIER_2,
  'conversations.info': TIER_3,
  'conversations.history': TIER_3,
  'conversations.replies': TIER_3,
  'conversations.open': TIER_3,
  'users.info': TIER_4,
  'views.open': TIER_4,
  'views.publish': TIER_4,
  // Slack calls setStatus's limit "special" without a figure; Tier 3 like its neighbours.
  'assistant.threads.setStatus': TIER_3,
  'assistant.threads.setTitle': TIER_3,
  'assistant.threads.setSuggestedPrompts': TIER_3,
  'agents.sessions.setStatus': TIER_3,
  'agents.sessions.rename': TIER_3,
  'auth.teams.list': TIER_2,
  'functions.completeSuccess': TIER_3,
  'functions.completeError': TIER_3,
};

/** What became of one method's calls. */
export interface MethodCounts {
  /** Let through and processed. */
  accepted: number;
  /** Answered 429, not processed. */
  refused: number;
  /**
   * Made while the Retry-After of that method's last 429 (for its channel, for
   * `chat.postMessage`) was still running: calls a client that honours Retry-After never makes.
   */
  duringRetryAfter: number;
}

export interface RateLimiter {
  /** Counts the call; undefined lets it through, else the seconds of its `Retry-After`. */
  admit(method: string, args: Record<string, unknown>): { retryAfterS: number } | undefined;
  /** Every method called so far, with what became of its calls. */
  counts(): Record<string, MethodCounts>;
}

/**
 * Token buckets for `table`, on the monotonic clock `now` (milliseconds). Every call is counted,
 * limited or not, so a table of no limits counts calls without refusing any.
 */
export function createRateLimiter(table: RateLimitTable, now = () => performance.now()): RateLimiter {
  const buckets = new Map<string, { tokens: number; at: number }>();
  /** When the last Retry-After given for a bucket runs out. */
  const retryUntil = new Map<string, number>();
  const counts = new Map<string, MethodCounts>();

  return {
    admit(method, args) {
      const count = counts.get(method) ?? { accepted: 0, refused: 0, duringRetryAfter: 0 };
      counts.set(method, count);
      const limit = table[method];
      if (!limit) {
        count.accepted += 1;
        return undefined;
      }
      const at = now();
      const key = limit.perChannel ? `${method}:${String(args.channel ?? '')}` : method;
      if ((retryUntil.get(key) ?? Number.NEGATIVE_INFINITY) > at) count.duringRetryAfter += 1;
      const perMs = limit.perMinute / 60_000;
      const bucket = buckets.get(key) ?? { tokens: limit.burst, at };
      bucket.tokens = Math.min(limit.burst, bucket.tokens + (at - bucket.at) * perMs);
      bucket.at = at;
      buckets.set(key, bucket);
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        count.accepted += 1;
        return undefined;
      }
      // Whole milliseconds first: a wait of 2000.0000001 ms (floating point) is 2 s, not 3.
      const waitMs = Math.round((1 - bucket.tokens) / perMs);
      const retryAfterS = Math.max(1, Math.ceil(waitMs / 1_000));
      retryUntil.set(key, at + retryAfterS * 1_000);
      count.refused += 1;
      return { retryAfterS };
    },
    counts: () => Object.fromEntries([...counts].map(([method, c]) => [method, { ...c }])),
  };
}
