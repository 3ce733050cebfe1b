import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { SlackGateway, SlackUser } from '../slack/gateway.js';
import { SlackCallError } from '../slack/gateway.js';
import type { Identity } from '../slack/identity.js';
import type { Store } from '../store/types.js';
import { BoundedCache } from '../util/lru.js';

/** Who is asking, and where. */
export interface Requester {
  teamId: string | undefined;
  channelId: string;
  userId: string;
}

export type RefusalReason = 'team' | 'channel' | 'user' | 'guest' | 'rate';

export type AccessDecision =
  | { allowed: true }
  | {
      allowed: false;
      reason: RefusalReason;
      /** When the person may try again (rate limit only). */
      retryAt?: Date;
      /** The hourly limit that was reached (rate limit only). */
      limit?: number;
    };

export interface AccessPolicy {
  /** Whether this person may give the agent an instruction here, now. */
  check(requester: Requester): Promise<AccessDecision>;
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
  now?: () => number;
}

/**
 * The access rules, checked before anything reaches the agent API: the installed workspace
 * only, allowed channels and people, no guests unless allowed, and a per-person hourly limit so
 * one person cannot spend the whole project's agent quota.
 */
export function createAccessPolicy(deps: AccessPolicyDeps): AccessPolicy {
  const { config, identity, slack, store, logger } = deps;
  const now = deps.now ?? Date.now;
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
      const since = now() - HOUR_MS;
      const recent = await store.recentInstructions(userId, since);
      if (recent.count >= config.maxInstructionsPerUserPerHour) {
        return {
          allowed: false,
          reason: 'rate',
          retryAt: new Date((recent.oldest ?? now()) + HOUR_MS),
          limit: config.maxInstructionsPerUserPerHour,
        };
      }
      return { allowed: true };
    },
  };
}
