import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { SlackGateway, SlackUser } from '../slack/gateway.js';
import { SlackCallError } from '../slack/gateway.js';
import type { Identity } from '../slack/identity.js';
import type { Store } from '../store/types.js';
import { BoundedCache } from '../util/lru.js';
import { AGENT_HOURLY_LIMIT } from '../views/status-report.js';

/** Who is asking, and where. */
export interface Requester {
  teamId: string | undefined;
  channelId: string;
  userId: string;
}

/** `rate`: the person's hourly limit; `project_rate`: the documentation project's. */
export type RefusalReason = 'team' | 'channel' | 'user' | 'guest' | 'rate' | 'project_rate';

export type AccessDecision =
  | { allowed: true }
  | {
      allowed: false;
      reason: RefusalReason;
      /** When the person may try again (hourly limits only). */
      retryAt?: Date;
      /** The hourly limit that was reached (hourly limits only). */
      limit?: number;
    };

export interface AccessPolicy {
  /** Whether this person may give the agent an instruction here (workspace, channel, person, guests). */
  check(requester: Requester): Promise<AccessDecision>;
  /**
   * Counts the run (an instruction checked with {@link AccessPolicy.check}) as one use against its
   * author's hourly limit and its project's, or refuses it when either is reached. The check and
   * the count are one store transaction, so simultaneous instructions never get past a limit.
   * A run whose call then surely did not reach the agent (it ends `failed`) stops counting.
   */
  reserve(runId: number): Promise<AccessDecision>;
}

/** How long account facts from users.info are trusted, in milliseconds. */
export const USER_CACHE_MS = 10 * 60_000;
/** Most people whose account facts are kept; the least recently seen are forgotten first. */
export const MAX_CACHED_USERS = 5_000;
export const HOUR_MS = 3_600_000;

export interface AccessPolicyDeps {
  config: Config['access'];
  identity: Identity;
  slack: SlackGateway;
  store: Store;
  logger: Logger;
  /** The deployment's documentation project (`DOCS_AGENT_PROJECT_ID`): jobs recorded without one ran there. */
  defaultProject: string;
  /** Uses of one project per hour; default the agent API's limit, {@link AGENT_HOURLY_LIMIT}. */
  projectHourlyLimit?: number;
  now?: () => number;
}

/**
 * The access rules, checked before anything reaches the agent API: the installed workspace
 * only, allowed channels and people, no guests unless allowed, a per-person hourly limit so one
 * person cannot spend the whole project's agent quota, and the project's own hourly limit.
 */
export function createAccessPolicy(deps: AccessPolicyDeps): AccessPolicy {
  const { config, identity, slack, store, logger } = deps;
  const now = deps.now ?? Date.now;
  const projectLimit = deps.projectHourlyLimit ?? AGENT_HOURLY_LIMIT;
  const users = new BoundedCache<SlackUser>(MAX_CACHED_USERS, USER_CACHE_MS, now);

  async function isGuest(userId: string): Promise<boolean> {
    const cached = users.get(userId);
    if (cached) return cached.isRestricted || cached.isUltraRestricted;
    try {
      const user = await slack.userInfo(userId);
      users.set(userId, user);
      return user.isRestricted || user.isUltraRestricted;
    } catch (error) {
      // Slack could not say. A definite "no such user" refuses; an outage must not stop the
      // whole team, so the check is skipped and logged.
      if (error instanceof SlackCallError && error.code === 'user_not_found') return true;
      logger.warn('could not look up the account type; guest check skipped', { userId, error });
      return false;
    }
  }

  return {
    async check({ teamId, channelId, userId }) {
      const installed = (await identity.get())?.teamId;
      if (installed && teamId && teamId !== installed) return { allowed: false, reason: 'team' };
      if (config.allowedChannelIds && !config.allowedChannelIds.has(channelId)) {
        return { allowed: false, reason: 'channel' };
      }
      if (config.allowedUserIds && !config.allowedUserIds.has(userId))
        return { allowed: false, reason: 'user' };
      if (!config.allowGuests && (await isGuest(userId))) return { allowed: false, reason: 'guest' };
      return { allowed: true };
    },
    async reserve(runId) {
      const perUser = config.maxInstructionsPerUserPerHour;
      const use = await store.reserveUse(
        runId,
        { perUser, perProject: projectLimit, defaultProject: deps.defaultProject, windowMs: HOUR_MS },
        now(),
      );
      if (use.reserved) return { allowed: true };
      const byUser = use.limit === 'user';
      return {
        allowed: false,
        reason: byUser ? 'rate' : 'project_rate',
        retryAt: new Date(use.freeAt),
        limit: byUser ? perUser : projectLimit,
      };
    },
  };
}
