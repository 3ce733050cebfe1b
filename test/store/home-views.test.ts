import { describe, expect, it } from 'vitest';
import { homeViewMethods } from '../../src/store/home-views.js';
import { areaStatements, HANDED_BACK } from '../helpers/store-statements.js';

const T0 = 1_700_000_000_000;

for (const [handedBack, awaited] of HANDED_BACK) {
  describe(`App Home views, their statements handed back ${handedBack}`, () => {
    it('knows a person once they opened the App Home, and only them', async () => {
      const { db, statements } = areaStatements({ awaited });
      const home = homeViewMethods(statements);
      expect(await home.homeOpened('U0ALICE')).toBe(false);
      await home.recordHomeOpened('U0ALICE', 'T0TEAM', T0);
      // Resolved only once the write is done: the row is there.
      expect(db.prepare('SELECT user_id AS userId, team_id AS teamId FROM home_views').all()).toEqual([
        { userId: 'U0ALICE', teamId: 'T0TEAM' },
      ]);
      expect(await home.homeOpened('U0ALICE')).toBe(true);
      expect(await home.homeOpened('U0BOB')).toBe(false);
      db.close();
    });
  });
}
