/**
 * What the bot asks Slack of a channel or a person, remembered for a while: who can read a channel
 * (`conversations.info`, bounded in time, fail closed), and people's names for prompts (`users.info`).
 */

import type { Logger } from '../logging/logger.js';
import { withTimeout } from '../util/loop.js';
import { BoundedCache } from '../util/lru.js';
import type { SlackGateway } from './gateway.js';

/**
 * Who can read a channel: anyone in the workspace (`public`), its members only (`private`), or
 * not known because Slack did not say in time (`unknown`, to be treated as private).
 */
export type ChannelAudience = 'public' | 'private' | 'unknown';

/**
 * How long Slack's word on a channel is trusted, in milliseconds: a channel made private is
 * seen as such within this. Short, since a wrong `public` would show private words.
 */
export const AUDIENCE_CACHE_MS = 60_000;
/** Most channels remembered; the least recently asked about are forgotten first. */
export const MAX_CACHED_AUDIENCES = 2_000;
/**
 * How long a job's start, or its outcome's notification, waits for `conversations.info`, in
 * milliseconds; past it the channel is treated as private. Both are background work, never
 * before Slack is acknowledged; the call waits its turn behind Slack's requests (the yield gate
 * holds background calls up to a second in a burst), so the limit leaves room beyond that.
 */
export const AUDIENCE_LOOKUP_MS = 2_500;

export interface ChannelAudiences {
  /** Who can read `channelId`, from Slack (`conversations.info`, remembered a minute); never rejects. */
  of(channelId: string): Promise<ChannelAudience>;
}

/**
 * Asks Slack who can read a channel when nothing the request carried said so (an `app_mention`
 * event names no channel type). Simultaneous questions about one channel share one call.
 */
export function createChannelAudiences(deps: {
  slack: Pick<SlackGateway, 'conversationFacts'>;
  logger: Logger;
  timeoutMs?: number;
  now?: () => number;
}): ChannelAudiences {
  const unknown = 'Slack could not say who can read a channel; its jobs are treated as private';
  const known = new BoundedCache<'public' | 'private'>(
    MAX_CACHED_AUDIENCES,
    AUDIENCE_CACHE_MS,
    deps.now ?? Date.now,
  );
  const asking = new Map<string, Promise<ChannelAudience>>();

  const ask = async (channelId: string): Promise<ChannelAudience> => {
    try {
      const facts = await deps.slack.conversationFacts(channelId);
      const audience = facts.isPrivate ? 'private' : 'public';
      known.set(channelId, audience);
      return audience;
    } catch (error) {
      deps.logger.warn(unknown, { channel: channelId, error });
      return 'unknown';
    } finally {
      asking.delete(channelId);
    }
  };

  return {
    async of(channelId) {
      const cached = known.get(channelId);
      if (cached) return cached;
      let pending = asking.get(channelId);
      if (!pending) {
        pending = ask(channelId);
        asking.set(channelId, pending);
      }
      const timeoutMs = deps.timeoutMs ?? AUDIENCE_LOOKUP_MS;
      const answer = await withTimeout(pending, timeoutMs);
      if (answer === undefined) deps.logger.warn(unknown, { channel: channelId, timedOutMs: timeoutMs });
      return answer ?? 'unknown';
    },
  };
}

/** How long a looked-up name is reused, in milliseconds. */
export const NAME_CACHE_MS = 60 * 60_000;
/** Most names kept (about 100 bytes each); the least recently used are forgotten first. */
export const MAX_NAMES = 5_000;
/** Most look-ups made for one thread (the rest keep their ids). */
const MAX_LOOKUPS = 30;

export interface UserNames {
  /** Names of the given users; those Slack cannot name right now are left out. */
  of(userIds: string[]): Promise<Map<string, string>>;
}

/** People's names for prompts, cached: users.info is rate-limited and names rarely change. */
export function createUserNames(
  slack: SlackGateway,
  logger: Logger,
  now: () => number = Date.now,
): UserNames {
  const cache = new BoundedCache<string>(MAX_NAMES, NAME_CACHE_MS, now);
  return {
    async of(userIds) {
      const out = new Map<string, string>();
      const missing: string[] = [];
      for (const id of new Set(userIds)) {
        const hit = cache.get(id);
        if (hit !== undefined) out.set(id, hit);
        else missing.push(id);
      }
      await Promise.all(
        missing.slice(0, MAX_LOOKUPS).map(async (id) => {
          try {
            const { name } = await slack.userInfo(id);
            cache.set(id, name);
            out.set(id, name);
          } catch (error) {
            logger.debug('could not look up a name', { userId: id, error });
          }
        }),
      );
      return out;
    },
  };
}
