import type { Statements } from './statements.js';
import type { HomeViewsStore } from './types.js';

/** Who opened the App Home, written once for both engines over their {@link Statements}. */
export function homeViewMethods(run: Pick<Statements, 'one' | 'write'>): HomeViewsStore {
  return {
    async recordHomeOpened(userId, teamId, now) {
      await run.write('recordHomeOpened', { userId, teamId, now });
    },
    homeOpened: async (userId) => (await run.one('homeOpened', { userId }, (row) => row)) !== undefined,
  };
}
