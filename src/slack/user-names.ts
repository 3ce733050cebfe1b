import type { Logger } from '../logging/logger.js';
import { BoundedCache } from '../util/lru.js';
import type { SlackGateway } from './gateway.js';

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
