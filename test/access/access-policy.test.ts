import { describe, expect, it } from 'vitest';
import { createAccessPolicy, MAX_CACHED_USERS, USER_CACHE_MS } from '../../src/access/access-policy.js';
import { createLogger } from '../../src/logging/logger.js';
import type { SlackGateway } from '../../src/slack/gateway.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/types.js';
import { installedIn } from '../helpers/fake-network.js';

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
  const identity = installedIn('T1');
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

/** A policy whose Slack answers as scripted: `userInfo` may fail, auth.test may not answer. */
function scripted(options: {
  userInfo: (id: string) => Promise<{ isRestricted: boolean; teamId?: string }>;
  learned?: string;
  allowedUserIds?: string[];
}) {
  let calls = 0;
  const slack = {
    async userInfo(id: string) {
      calls++;
      const facts = await options.userInfo(id);
      return { name: id, isUltraRestricted: false, isBot: false, deleted: false, ...facts };
    },
  } as unknown as SlackGateway;
  // What a signed request named: auth.test does not answer.
  const identity = installedIn(options.learned);
  const access = createAccessPolicy({
    config: {
      allowedChannelIds: null,
      allowedUserIds: options.allowedUserIds ? new Set(options.allowedUserIds) : null,
      allowGuests: false,
      maxInstructionsPerUserPerHour: 30,
    },
    defaultProject: 'proj_test',
    identity,
    slack,
    store: {} as Store,
    logger: createLogger({ level: 'error', secrets: [], write: () => {} }),
  });
  return { access, calls: () => calls };
}

const member = async () => ({ isRestricted: false });
const outage = async (): Promise<never> => {
  throw new Error('users.info timed out');
};

describe('access fails closed', () => {
  it('refuses an author of another organisation from the request alone, while auth.test cannot answer', async () => {
    const { access, calls } = scripted({ userInfo: member, learned: 'T1' });
    expect(await access.check({ teamId: 'T0OTHER', channelId: 'C1', userId: 'U0EXT' })).toMatchObject({
      allowed: false,
      reason: 'team',
    });
    expect(calls()).toBe(0);
  });

  it('holds everyone while neither auth.test nor a request has named the workspace', async () => {
    const { access } = scripted({ userInfo: member });
    expect(await access.check({ teamId: 'T1', channelId: 'C1', userId: 'U1' })).toMatchObject({
      allowed: false,
      reason: 'unverified',
    });
  });

  it('holds a person whose account type Slack cannot give, instead of letting a guest through', async () => {
    const { access } = scripted({ userInfo: outage, learned: 'T1' });
    expect(await access.check({ teamId: 'T1', channelId: 'C1', userId: 'U1' })).toMatchObject({
      allowed: false,
      reason: 'unverified',
    });
  });

  it('counts as context only the messages of people who could instruct the agent', async () => {
    const guests = scripted({
      userInfo: async (id) => ({ isRestricted: id.startsWith('UG') }),
      learned: 'T1',
    }).access;
    expect(await guests.mayInstruct({ userId: 'U1', teamId: 'T1' })).toBe(true);
    expect(await guests.mayInstruct({ userId: 'UGUEST', teamId: 'T1' })).toBe(false);
    expect(await guests.mayInstruct({ userId: 'U1', teamId: 'T0OTHER' })).toBe(false);
    expect(await guests.mayInstruct({ userId: 'U1', teamId: undefined })).toBe(false);
    expect(await guests.mayInstruct({ userId: undefined, teamId: 'T1' })).toBe(true);
    expect(await guests.mayInstruct({ userId: undefined, teamId: 'T0OTHER' })).toBe(false);
    const unknown = scripted({ userInfo: outage, learned: 'T1' }).access;
    expect(await unknown.mayInstruct({ userId: 'U1', teamId: 'T1' })).toBe(false);
    const listed = scripted({ userInfo: member, learned: 'T1', allowedUserIds: ['U1'] }).access;
    expect(await listed.mayInstruct({ userId: 'U1', teamId: 'T1' })).toBe(true);
    expect(await listed.mayInstruct({ userId: 'U2', teamId: 'T1' })).toBe(false);
    expect(await listed.mayInstruct({ userId: undefined, teamId: 'T1' })).toBe(false);
  });

  it('asks Slack for the workspace a message did not name, and withholds only when Slack cannot say', async () => {
    const teams: Record<string, string> = { U1: 'T1', U0EXT: 'T0OTHER' };
    const { access, calls } = scripted({
      userInfo: async (id) => ({ isRestricted: false, ...(teams[id] ? { teamId: teams[id] } : {}) }),
      learned: 'T1',
    });
    expect(await access.mayInstruct({ userId: 'U1', teamId: undefined })).toBe(true);
    expect(await access.mayInstruct({ userId: 'U0EXT', teamId: undefined })).toBe(false);
    expect(await access.mayInstruct({ userId: 'U0SILENT', teamId: undefined })).toBe(false);
    // Cached: asked again, Slack is not.
    expect(await access.mayInstruct({ userId: 'U1', teamId: undefined })).toBe(true);
    expect(calls()).toBe(3);
  });
});

describe('room left in the hour (before "Try again" changes anything)', () => {
  it('tells a person over their limit, or a project over its own, and counts nothing', async () => {
    const at = 1_700_000_000_000;
    const store = openSqliteStore(':memory:');
    const access = createAccessPolicy({
      config: {
        allowedChannelIds: null,
        allowedUserIds: null,
        allowGuests: true,
        maxInstructionsPerUserPerHour: 2,
      },
      projectHourlyLimit: 3,
      defaultProject: 'proj_test',
      identity: installedIn('T1'),
      slack: {} as SlackGateway,
      store,
      logger: createLogger({ level: 'error', secrets: [], write: () => {} }),
      now: () => at,
    });
    const use = async (key: string, userId: string) => {
      const { run } = await store.insertJob(
        {
          teamId: 'T1',
          channelId: 'C1',
          requesterId: userId,
          instruction: key,
          triggerKey: key,
          responseUrl: null,
          pollIntervalMs: 1_000,
        },
        { kind: 'create', prompt: key, authorId: userId, messageTs: null },
        at - 60_000,
      );
      expect(await access.reserve(run.id)).toEqual({ allowed: true });
    };
    try {
      await use('a1', 'U0ALICE');
      await use('a2', 'U0ALICE');
      expect(await access.room('U0ALICE', null)).toEqual({
        allowed: false,
        reason: 'rate',
        retryAt: new Date(at + 3_600_000),
        limit: 2,
      });
      expect(await access.room('U0BOB', null)).toEqual({ allowed: true });
      await use('b1', 'U0BOB');
      expect(await access.room('U0CAROL', null)).toEqual({
        allowed: false,
        reason: 'project_rate',
        limit: 3,
      });
      expect(await access.room('U0CAROL', 'proj_other')).toEqual({ allowed: true });
      expect((await store.recentInstructions('U0ALICE', 0)).count).toBe(2);
    } finally {
      await store.close();
    }
  });
});

describe('direct messages in the access policy', () => {
  const decide = async (
    access: { allowedChannelIds?: string[]; allowDirectMessages?: boolean },
    where: { channelId: string; contextChannelId?: string },
  ) => {
    const policy = createAccessPolicy({
      config: {
        allowedChannelIds: access.allowedChannelIds ? new Set(access.allowedChannelIds) : null,
        allowedUserIds: null,
        allowGuests: true,
        allowDirectMessages: access.allowDirectMessages,
        maxInstructionsPerUserPerHour: 30,
      },
      defaultProject: 'proj_test',
      identity: installedIn('T1'),
      slack: {} as SlackGateway,
      store: {} as Store,
      logger: createLogger({ level: 'error', secrets: [], write: () => {} }),
    });
    const decision = await policy.check({ teamId: 'T1', userId: 'U1', ...where });
    return decision.allowed ? 'allowed' : decision.reason;
  };

  it('allows a direct message without an allow-list, refuses it with one (fail closed) unless told otherwise', async () => {
    expect(await decide({}, { channelId: 'D1' })).toBe('allowed');
    expect(await decide({ allowDirectMessages: false }, { channelId: 'D1' })).toBe('direct');
    expect(await decide({ allowedChannelIds: ['C1'] }, { channelId: 'D1' })).toBe('direct');
    expect(await decide({ allowedChannelIds: ['C1'], allowDirectMessages: true }, { channelId: 'D1' })).toBe(
      'allowed',
    );
    expect(await decide({ allowedChannelIds: ['C1'], allowDirectMessages: false }, { channelId: 'D1' })).toBe(
      'direct',
    );
  });

  it('applies the allow-list to the channel the assistant pane is open beside', async () => {
    const listed = { allowedChannelIds: ['C1'] };
    expect(await decide(listed, { channelId: 'D1', contextChannelId: 'C1' })).toBe('allowed');
    expect(await decide(listed, { channelId: 'D1', contextChannelId: 'C2' })).toBe('channel');
    expect(
      await decide({ ...listed, allowDirectMessages: true }, { channelId: 'D1', contextChannelId: 'C2' }),
    ).toBe('channel');
    expect(await decide({ allowDirectMessages: false }, { channelId: 'D1', contextChannelId: 'C1' })).toBe(
      'direct',
    );
    // Channels are unchanged by the rule.
    expect(await decide(listed, { channelId: 'C2' })).toBe('channel');
    expect(await decide({ allowDirectMessages: false }, { channelId: 'C2' })).toBe('allowed');
  });
});
