import type { Logger } from '../logging/logger.js';
import type { SlackPause, SlackPausesStore } from '../store/types.js';
import { createLoop } from '../util/loop.js';

/*
 * Slack's rate limits as the bot keeps to them. Slack limits each Web API method per workspace
 * (Tier 2 about 20 calls a minute, Tier 3 about 50, Tier 4 about 100) and `chat.postMessage` to
 * about one message a second per channel, and answers a call over its limit with HTTP 429 and a
 * `Retry-After`. An app that keeps calling through its 429s is treated as misbehaving, and each
 * pending call waiting out its own `Retry-After` comes back together with the others, to be
 * refused again. So the bot keeps one picture of the limits for all its calls:
 *
 * - After a 429, no call of that method (of that channel, for a post) is made until its
 *   `Retry-After` has passed: a call asked for meanwhile is deferred without reaching Slack.
 * - The methods whose calls only keep what people see in step (the status card's edits, the
 *   emoji on its root, the agent session's status), once Slack has refused one of them, are
 *   paced below their tier for a while, the rate shared by the instances running, so a busy
 *   workspace spends its budget evenly instead of in bursts that Slack refuses. Until then they
 *   go as they come: a quiet workspace waits for nothing. Their calls all come from the outbox,
 *   which delivers a deferred item again when its turn comes, coalesced with the updates
 *   queued after it.
 *
 * Calls whose answer a person is waiting for (posts, private answers, modals) are never paced:
 * only a 429 Slack gave for them defers them.
 *
 * Instances sharing a store share the picture: each 429 is recorded there, and each instance
 * reads the waits the others were told about once a second (`shareSlackLimits`).
 */

/** Calls a minute Slack allows per workspace, for each paced method (Slack's tiers). */
export const PACED_METHODS: Readonly<Record<string, number>> = {
  'chat.update': 50,
  'reactions.add': 50,
  'reactions.remove': 20,
  'agents.sessions.setStatus': 50,
};

/** The share of a tier the bot uses: Slack's figures are approximate, and a little margin keeps clear of them. */
const PACE_SHARE = 0.9;

/** How long a method stays paced after Slack last refused it, in milliseconds. */
export const PACED_FOR_MS = 10 * 60_000;

/** Calls a paced method may make at once after a quiet spell: about three seconds' worth. */
const burstOf = (perMinute: number) => Math.max(1, Math.floor(perMinute / 20));

/** What a call of a method is limited by: the method in the workspace, or a post's channel. */
export const scopeOf = (method: string, channel?: string): string =>
  method === 'chat.postMessage' && channel ? `${method}:${channel}` : method;

export interface SlackLimits {
  /**
   * Asks for a call of `method` in `scope` now: 0 when it may go (its turn is taken), or how many
   * milliseconds until it may.
   */
  turn(method: string, scope: string): number;
  /** Slack refused a call in `scope` with a 429 asking to wait `retryAfterMs`. */
  refused(scope: string, retryAfterMs: number): void;
  /** Waits another instance was told about: kept as this one's own, not told on again. */
  learn(pauses: readonly SlackPause[]): void;
}

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * The bot's picture of Slack's limits, for one process. `instances`: how many instances share the
 * workspace's budget now (each paces itself to its share).
 */
export function createSlackLimits(
  options: {
    instances?: () => number;
    now?: () => number;
    /** Told every 429 this instance meets, for the other instances (see {@link shareSlackLimits}). */
    tell?: (scope: string, retryAfterMs: number) => void;
  } = {},
): SlackLimits {
  const now = options.now ?? Date.now;
  const instances = () => Math.max(1, options.instances?.() ?? 1);
  /** When each scope may be called again, after a 429. */
  const pausedUntil = new Map<string, number>();
  /** The paced methods Slack has refused, each with its turns (the bucket starts empty: Slack just said no). */
  const buckets = new Map<string, Bucket & { refusedAt: number }>();

  /** Waits left on the pace of `method` (0: a turn is free, and taken). */
  function paced(method: string): number {
    const perMinute = PACED_METHODS[method];
    const bucket = buckets.get(method);
    if (perMinute === undefined || bucket === undefined) return 0;
    if (now() - bucket.refusedAt > PACED_FOR_MS) {
      buckets.delete(method);
      return 0;
    }
    const share = instances();
    const perMs = (perMinute * PACE_SHARE) / share / 60_000;
    const burst = Math.max(1, Math.floor(burstOf(perMinute) / share));
    const at = now();
    const tokens = Math.min(burst, bucket.tokens + (at - bucket.at) * perMs);
    if (tokens >= 1) {
      buckets.set(method, { ...bucket, tokens: tokens - 1, at });
      return 0;
    }
    buckets.set(method, { ...bucket, tokens, at });
    return Math.ceil((1 - tokens) / perMs);
  }

  function pause(scope: string, retryAfterMs: number) {
    const until = now() + Math.max(0, retryAfterMs);
    if (PACED_METHODS[scope] !== undefined && until > (pausedUntil.get(scope) ?? 0))
      buckets.set(scope, { tokens: 0, at: until, refusedAt: now() });
    // Calls already on their way may bring back shorter waits: the longest one Slack gave holds.
    if (until > (pausedUntil.get(scope) ?? 0)) pausedUntil.set(scope, until);
    // A scope refused for a while is the same scope tomorrow: keep the map from growing with channels.
    if (pausedUntil.size > 10_000)
      for (const [key, at] of pausedUntil) if (at <= now()) pausedUntil.delete(key);
  }

  return {
    turn(method, scope) {
      const until = pausedUntil.get(scope);
      if (until !== undefined) {
        const left = until - now();
        if (left > 0) return left;
        pausedUntil.delete(scope);
      }
      return paced(method);
    },
    refused(scope, retryAfterMs) {
      pause(scope, retryAfterMs);
      options.tell?.(scope, retryAfterMs);
    },
    learn(pauses) {
      for (const { scope, leftMs } of pauses) pause(scope, leftMs);
    },
  };
}

/** How often an instance reads the waits the others were told about, in milliseconds. */
export const SHARED_WAITS_EVERY_MS = 1_000;

/**
 * The instances' shared picture of Slack's limits: `tell` records a 429 in the store (for
 * {@link createSlackLimits}), and the loop reads the others' into `limits` once a second while
 * more than this instance is running.
 */
export function shareSlackLimits(deps: { store: SlackPausesStore; logger: Logger; liveCount: () => number }) {
  const { store, logger } = deps;
  return {
    tell(scope: string, retryAfterMs: number) {
      store
        .pauseSlack(scope, retryAfterMs)
        .catch((error) => logger.debug('could not share a Slack wait', { scope, error }));
    },
    loop: (limits: Pick<SlackLimits, 'learn'>) =>
      createLoop({
        name: 'shared Slack waits',
        logger,
        idleMs: SHARED_WAITS_EVERY_MS,
        async step() {
          if (deps.liveCount() > 1) limits.learn(await store.slackPauses());
          return { busy: false };
        },
      }),
  };
}
