import { describe, expect, it } from 'vitest';
import { createAccessPolicy, MAX_CACHED_USERS, USER_CACHE_MS } from '../../src/access/access-policy.js';
import { createLogger } from '../../src/logger.js';
import type { SlackGateway } from '../../src/slack/gateway.js';
import type { Identity } from '../../src/slack/identity.js';
import type { Store } from '../../src/store/types.js';

function policy(now: () => number = Date.now) {
  const lookups: string[] = [];
  const slack = {
    async userInfo(id: string) {
      lookups.push(id);
      return {
        name: id,
        isRestricted: id.startsWith('G'),
        isUltraRestricted: false,
        isBot: false,
        deleted: false,
      };
    },
  } as unknown as SlackGateway;
  const store = { recentInstructions: async () => ({ count: 0, oldest: undefined }) } as unknown as Store;
  const identity = { get: async () => ({ teamId: 'T1' }) } as unknown as Identity;
  const access = createAccessPolicy({
    config: {
      allowedChannelIds: null,
      allowedUserIds: null,
      allowGuests: false,
      maxInstructionsPerUserPerHour: 30,
    },
    defaultProject: 'proj_test',
    identity,
    slack,
    store,
    logger: createLogger({ level: 'error', secrets: [], write: () => {} }),
    now,
  });
  const check = (userId: string) => access.check({ teamId: 'T1', channelId: 'C1', userId });
  return { check, lookups };
}

describe('the account cache of the access policy', () => {
  it('asks Slack once per person while the answer is fresh', async () => {
    let now = 0;
    const { check, lookups } = policy(() => now);
    expect(await check('G1')).toMatchObject({ allowed: false, reason: 'guest' });
    expect(await check('U1')).toEqual({ allowed: true });
    expect(await check('G1')).toMatchObject({ allowed: false, reason: 'guest' });
    expect(lookups).toEqual(['G1', 'U1']);
    now = USER_CACHE_MS;
    await check('G1');
    expect(lookups).toEqual(['G1', 'U1', 'G1']);
  });

  it(`stays within ${MAX_CACHED_USERS} people under many distinct ones`, async () => {
    const { check, lookups } = policy();
    const people = 3 * MAX_CACHED_USERS;
    for (let i = 0; i < people; i++) await check(`U${i}`);
    expect(lookups).toHaveLength(people);
    // The most recent are still known; the first were forgotten (so the cache held no more).
    await check(`U${people - 1}`);
    await check(`U${people - MAX_CACHED_USERS}`);
    expect(lookups).toHaveLength(people);
    await check('U0');
    expect(lookups).toHaveLength(people + 1);
  });
});
