import type { RenderHints } from '../blocks/messages.js';
import { leaseFor } from '../cluster/membership.js';
import type { Config } from '../config/config.js';
import type { Wakeable } from '../jobs/job-context.js';
import type { MetricsHooks } from '../jobs/metrics-hooks.js';
import type { Logger } from '../logging/logger.js';
import { createRequestBudget } from '../poller/budget.js';
import type { Store } from '../store/types.js';
import type { Loop } from '../util/loop.js';
import { gated, type YieldGate } from '../util/yield-gate.js';
import { createFollower } from './follower.js';

import { createGitHub, GITHUB_TIMEOUT_MS, webHostOf } from './github.js';
import { type FollowingPace, paceOf } from './pace.js';

/**
 * Requests per second to GitHub, across every instance sharing the store: 3,600 an hour, under
 * the 5,000 an hour GitHub allows a token (a 304 costs none of them), leaving room for whatever
 * else the operator's token does.
 */
export const GITHUB_REQUESTS_PER_SECOND = 1;

/** A loop that never does anything: following is off without `GITHUB_TOKEN`. */
const NOTHING: Loop = { start() {}, async stop() {}, kick() {}, track() {} };

/** What the app's start may say of following (tests make it quick). */
export interface FollowingOptions {
  /** How often pull requests are checked; default `GITHUB_CHECK_EVERY_MS`'s pace (see `paceOf`). */
  pullRequestPace?: FollowingPace;
}

/** What following pull requests is built from: the composition root's foundation. */
export interface FollowingBase {
  config: Pick<Config, 'github'>;
  options: FollowingOptions;
  store: Store;
  instanceId: string;
  logger: Logger;
  hints: RenderHints;
  metrics: { hooks: Pick<MetricsHooks, 'pullRequest'> };
  gate: YieldGate;
}

/**
 * Pull requests followed to their end when the operator gave read access to GitHub
 * (`GITHUB_TOKEN`); without it, a loop that does nothing: no request, no new text.
 */
export function followPullRequests(
  parts: FollowingBase,
  outbox: Wakeable,
  /** Instances sharing the store, which split the request budget. */
  membership: { liveCount(): number },
): Loop {
  const { token, apiUrl } = parts.config.github;
  if (!token) return NOTHING;
  const rate = () => GITHUB_REQUESTS_PER_SECOND / Math.max(1, membership.liveCount());
  const budget = createRequestBudget({ rate });
  const host = gated(createGitHub({ apiUrl, token, budget }), parts.gate);
  return createFollower({
    store: parts.store,
    instanceId: parts.instanceId,
    host,
    webHost: webHostOf(apiUrl),
    hints: parts.hints,
    outbox,
    logger: parts.logger,
    metrics: parts.metrics.hooks,
    // A check is one request, and one more after a redirect; it waits for the budget before both.
    lease: leaseFor(2 * (GITHUB_TIMEOUT_MS + 1_000)),
    rate,
    pace: parts.options.pullRequestPace ?? paceOf(parts.config.github.checkEveryMs),
    gate: parts.gate,
  });
}
