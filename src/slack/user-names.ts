import type { Logger } from '../logger.js';
import type { SlackGateway } from './gateway.js';

/** How long a looked-up name is reused, in milliseconds. */
export const NAME_CACHE_MS = 60 * 60_000;
/** Most names kept; the oldest are forgotten first. */
const MAX_NAMES = 5_000;
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
  const cache = new Map<string, { name: string; at: number }>();
  return {
    async of(userIds) {
      const out = new Map<string, string>();
      const missing: string[] = [];
      for (const id of new Set(userIds)) {
        const hit = cache.get(id);
        if (hit && now() - hit.at < NAME_CACHE_MS) out.set(id, hit.name);
        else missing.push(id);
      }
      await Promise.all(
        missing.slice(0, MAX_LOOKUPS).map(async (id) => {
          try {
            const { name } = await slack.userInfo(id);
            cache.delete(id);
            cache.set(id, { name, at: now() });
            if (cache.size > MAX_NAMES) cache.delete(cache.keys().next().value as string);
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
