import { describe, expect, it } from 'vitest';
import { createAccessPolicy, HOUR_MS } from '../../src/access/access-policy.js';
import { createLogger } from '../../src/logging/logger.js';
import { SlackCallError } from '../../src/slack/caller.js';
import type { SlackGateway, SlackUser } from '../../src/slack/gateway.js';
import type { Store, UseReservation } from '../../src/store/types.js';
import { installedIn, installedOrgWide } from '../helpers/fake-network.js';

const AT = 1_700_000_000_000;
const MEMBER: SlackUser = {
  name: 'someone',
  isRestricted: false,
  isUltraRestricted: false,
  isBot: false,
  deleted: false,
  teamId: 'T1',
};

/** A policy over scripted answers: the people Slack knows (by id), and what the store reserves. */
function rules(
  options: {
    people?: Record<string, Partial<SlackUser> | Error>;
    allowedChannelIds?: string[];
    allowedUserIds?: string[];
    allowGuests?: boolean;
    reservation?: UseReservation;
    /** The person's uses in the hour, as the store counts them. */
    recent?: { count: number; oldest: number | undefined };
    /** The workspace the bot is installed in; none known yet when null. */
    installed?: string | null;
    /** An organisation-wide install instead, and the workspaces it lists (undefined: unknown). */
    org?: { enterpriseId: string; workspaces: string[] | undefined };
  } = {},
) {
  const installed = options.installed === null ? undefined : (options.installed ?? 'T1');
  const identity = options.org
    ? installedOrgWide(options.org.enterpriseId, options.org.workspaces)
    : installedIn(installed);
  const lookups: string[] = [];
  const reserved: unknown[] = [];
  const slack = {
    async userInfo(id: string) {
      lookups.push(id);
      const known = options.people?.[id] ?? {};
      if (known instanceof Error) throw known;
      return { ...MEMBER, ...known };
    },
  } as unknown as SlackGateway;
  const logs: string[] = [];
  const store = {
    recentInstructions: async () => options.recent ?? { count: 0, oldest: undefined },
    instructionsSince: async () => [],
    async reserveUse(...args: unknown[]) {
      reserved.push(args);
      return options.reservation ?? { reserved: true };
    },
  } as unknown as Store;
  const policy = createAccessPolicy({
    config: {
      allowedChannelIds: options.allowedChannelIds ? new Set(options.allowedChannelIds) : null,
      allowedUserIds: options.allowedUserIds ? new Set(options.allowedUserIds) : null,
      allowGuests: options.allowGuests ?? false,
      maxInstructionsPerUserPerHour: 4,
    },
    projectHourlyLimit: 9,
    defaultProject: 'proj_test',
    identity,
    slack,
    store,
    logger: createLogger({ level: 'warn', secrets: [], write: (line) => logs.push(line) }),
    now: () => AT,
  });
  const verdict = async (userId: string, where: { channelId?: string; teamId?: string } = {}) => {
    const decision = await policy.check({ teamId: 'T1', channelId: 'C1', userId, ...where });
    return decision.allowed ? 'allowed' : decision.reason;
  };
  return { policy, verdict, lookups, reserved, logs };
}

describe('who may use the bot', () => {
  it('refuses every kind of guest and a deactivated account, and lets members through', async () => {
    const { verdict } = rules({
      people: {
        UMULTI: { isRestricted: true },
        USINGLE: { isUltraRestricted: true },
        UGONE: { deleted: true },
      },
    });
    expect(await verdict('UMEMBER')).toBe('allowed');
    expect(await verdict('UMULTI')).toBe('guest');
    expect(await verdict('USINGLE')).toBe('guest');
    expect(await verdict('UGONE')).toBe('guest');
  });

  it('lets guests through, without asking Slack, only where guests are allowed', async () => {
    const { verdict, lookups } = rules({ allowGuests: true, people: { UMULTI: { isRestricted: true } } });
    expect(await verdict('UMULTI')).toBe('allowed');
    expect(lookups).toEqual([]);
  });

  it('refuses a person Slack says does not exist, and holds one Slack cannot answer for', async () => {
    const { verdict } = rules({
      people: {
        UNOBODY: new SlackCallError('users.info', 'user_not_found'),
        ULIMITED: new SlackCallError('users.info', 'ratelimited'),
      },
    });
    expect(await verdict('UNOBODY')).toBe('guest');
    expect(await verdict('ULIMITED')).toBe('unverified');
  });

  it('asks Slack again for a person it could not answer for, and says why the instruction waits', async () => {
    const { verdict, lookups, logs } = rules({ people: { UFLAKY: new Error('socket hang up') } });
    expect(await verdict('UFLAKY')).toBe('unverified');
    expect(await verdict('UFLAKY')).toBe('unverified');
    expect(lookups).toEqual(['UFLAKY', 'UFLAKY']);
    expect(logs).toHaveLength(2);
    expect(logs[0]).toContain('could not look up the account type; the instruction waits');
    expect(logs[0]).toContain('UFLAKY');
  });

  it('trusts an app’s message as context only from the installed workspace, once that is known', async () => {
    expect(await rules().policy.mayInstruct({ userId: undefined, teamId: 'T1' })).toBe(true);
    const unknown = rules({ installed: null }).policy;
    expect(await unknown.mayInstruct({ userId: undefined, teamId: undefined })).toBe(false);
    expect(await unknown.mayInstruct({ userId: undefined, teamId: 'T1' })).toBe(false);
  });

  it('refuses a member of another workspace, whether the request or Slack says so', async () => {
    const { verdict, lookups } = rules({
      people: { UEXT: { teamId: 'T0OTHER' }, UNOTEAM: { teamId: undefined } },
    });
    expect(await verdict('U1', { teamId: 'T0OTHER' })).toBe('team');
    expect(lookups).toEqual([]);
    expect(await verdict('UEXT')).toBe('team');
    expect(await verdict('UNOTEAM')).toBe('allowed');
  });

  it('refuses people and channels off their allow-lists, before asking Slack', async () => {
    const { verdict, lookups } = rules({ allowedChannelIds: ['C1'], allowedUserIds: ['U1'] });
    expect(await verdict('U1')).toBe('allowed');
    expect(await verdict('U2')).toBe('user');
    expect(await verdict('U1', { channelId: 'C2' })).toBe('channel');
    expect(lookups).toEqual(['U1']);
  });

  it('does not use the allow-list of channels for the App Home, where no channel applies', async () => {
    const { policy } = rules({ allowedChannelIds: ['C1'] });
    expect(await policy.check({ teamId: 'T1', channelId: undefined, userId: 'U1' })).toEqual({
      allowed: true,
    });
  });
});

describe('an organisation-wide (Enterprise Grid) install', () => {
  const org = { enterpriseId: 'E0ACME', workspaces: ['T0ACMEDOCS', 'T0ACMEENG'] };
  const people = {
    WDOCS: { teamId: 'T0ACMEDOCS', enterpriseId: 'E0ACME' },
    WENG: { teamId: 'T0ACMEENG', enterpriseId: 'E0ACME' },
    // A workspace of the organisation that has not been granted the app.
    WSALES: { teamId: 'T0ACMESALES', enterpriseId: 'E0ACME' },
    WGLOBEX: { teamId: 'T0GLOBEX', enterpriseId: 'E0GLOBEX' },
    UPLAIN: { teamId: 'T0PLAIN' },
    WGUEST: { teamId: 'T0ACMEDOCS', enterpriseId: 'E0ACME', isRestricted: true },
  };

  it('serves people of every workspace of the organisation, and no other organisation', async () => {
    const { verdict } = rules({ org, people });
    expect(await verdict('WDOCS', { teamId: 'T0ACMEDOCS' })).toBe('allowed');
    expect(await verdict('WENG', { teamId: 'T0ACMEENG' })).toBe('allowed');
    expect(await verdict('WSALES', { teamId: 'T0ACMESALES' })).toBe('allowed');
    expect(await verdict('WGLOBEX', { teamId: 'T0GLOBEX' })).toBe('team');
    // Slack Connect from a workspace outside any organisation, even in an organisation's channel.
    expect(await verdict('UPLAIN', { teamId: 'T0PLAIN' })).toBe('team');
    expect(await verdict('WGLOBEX', { teamId: 'T0ACMEDOCS' })).toBe('team');
    expect(await verdict('WGUEST', { teamId: 'T0ACMEDOCS' })).toBe('guest');
  });

  it('lets guests of a listed workspace through without asking Slack, where guests are allowed', async () => {
    const { verdict, lookups } = rules({ org, people, allowGuests: true });
    expect(await verdict('WGUEST', { teamId: 'T0ACMEDOCS' })).toBe('allowed');
    expect(lookups).toEqual([]);
    expect(await verdict('WGLOBEX', { teamId: 'T0GLOBEX' })).toBe('team');
    expect(lookups).toEqual(['WGLOBEX']);
  });

  it('holds a person without an organisation while its workspaces are unknown', async () => {
    const { verdict } = rules({ org: { ...org, workspaces: undefined }, people });
    expect(await verdict('WDOCS', { teamId: 'T0ACMEDOCS' })).toBe('allowed');
    expect(await verdict('UPLAIN', { teamId: 'T0PLAIN' })).toBe('unverified');
  });

  it('trusts an app’s message as context only from a listed workspace', async () => {
    const { policy } = rules({ org, people });
    expect(await policy.mayInstruct({ userId: undefined, teamId: 'T0ACMEDOCS' })).toBe(true);
    expect(await policy.mayInstruct({ userId: undefined, teamId: 'T0GLOBEX' })).toBe(false);
    expect(await policy.mayInstruct({ userId: undefined, teamId: undefined })).toBe(false);
  });
});

describe('reserving a use of the hour', () => {
  it('asks the store for the person’s and the project’s limits over the last hour, now', async () => {
    const { policy, reserved } = rules();
    expect(await policy.reserve(7)).toEqual({ allowed: true });
    expect(reserved).toEqual([
      [7, { perUser: 4, perProject: 9, defaultProject: 'proj_test', windowMs: HOUR_MS }, AT],
    ]);
  });

  it('refuses with the person’s limit and when a use frees up', async () => {
    const { policy } = rules({
      reservation: { reserved: false, limit: 'user', count: 4, freeAt: AT + 60_000 },
    });
    expect(await policy.reserve(7)).toEqual({
      allowed: false,
      reason: 'rate',
      retryAt: new Date(AT + 60_000),
      limit: 4,
    });
  });

  it('refuses with the project’s limit and when a use frees up', async () => {
    const { policy } = rules({
      reservation: { reserved: false, limit: 'project', count: 9, freeAt: AT + 120_000 },
    });
    expect(await policy.reserve(7)).toEqual({
      allowed: false,
      reason: 'project_rate',
      retryAt: new Date(AT + 120_000),
      limit: 9,
    });
  });
});

describe('room left in the hour', () => {
  it('says a person over their limit may try again an hour after their oldest use in it', async () => {
    const oldest = AT - 20 * 60_000;
    const { policy } = rules({ recent: { count: 4, oldest } });
    expect(await policy.room('U1', null)).toEqual({
      allowed: false,
      reason: 'rate',
      retryAt: new Date(oldest + HOUR_MS),
      limit: 4,
    });
    expect(await rules({ recent: { count: 3, oldest } }).policy.room('U1', null)).toEqual({ allowed: true });
  });
});
