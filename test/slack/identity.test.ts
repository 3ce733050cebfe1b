import { afterEach, describe, expect, it } from 'vitest';
import { createSlackCaller } from '../../src/slack/caller.js';
import {
  createIdentity,
  createOrgWorkspaces,
  IDENTITY_RETRY_MS,
  installationOfAuthTest,
  installationOfId,
  WORKSPACES_CACHE_MS,
  WORKSPACES_PAGE_SIZE,
  WORKSPACES_PAGES,
  WORKSPACES_RETRY_MS,
} from '../../src/slack/identity.js';
import { listen } from '../helpers/http.js';
import { appSlackClient } from '../helpers/slack-client.js';
import {
  BOT_ID,
  BOT_USER_ID,
  type SlackStandIn,
  startSlackStandIn,
  TEAM_ID,
} from '../helpers/slack-stand-in.js';

let slack: SlackStandIn | undefined;
let closeOrg: (() => Promise<void>) | undefined;
afterEach(async () => {
  await slack?.close();
  await closeOrg?.();
  slack = undefined;
  closeOrg = undefined;
});

/** An identity on the app's client and the stand-in, on a clock the test moves. */
async function identityOnStandIn() {
  slack = await startSlackStandIn();
  const clock = { now: 1_000_000 };
  // Slack's Retry-After is kept on the same clock.
  const { caller, logger, lines } = appSlackClient(slack.apiUrl, { logLevel: 'warn', now: () => clock.now });
  const identity = createIdentity(caller, logger, () => clock.now);
  return { slack, identity, clock, lines };
}

const KNOWN = { teamId: TEAM_ID, botUserId: BOT_USER_ID, botId: BOT_ID, url: 'https://test-team.slack.com/' };

describe('the bot’s identity', () => {
  it('asks auth.test once and keeps the answer', async () => {
    const { slack, identity } = await identityOnStandIn();
    expect(await identity.get()).toEqual(KNOWN);
    expect(await identity.get()).toEqual(KNOWN);
    expect(identity.peek()).toEqual(KNOWN);
    expect(slack.callsTo('auth.test')).toHaveLength(1);
  });

  it('asks once for callers who ask at the same time', async () => {
    const { slack, identity } = await identityOnStandIn();
    const answers = await Promise.all([identity.get(), identity.get(), identity.get()]);
    expect(answers).toEqual([KNOWN, KNOWN, KNOWN]);
    expect(slack.callsTo('auth.test')).toHaveLength(1);
  });

  it('peek answers at once with what is known, and starts the look-up when nothing is', async () => {
    const { slack, identity } = await identityOnStandIn();
    expect(identity.peek()).toBeUndefined();
    // The look-up peek started is the one get joins.
    expect(await identity.get()).toEqual(KNOWN);
    expect(identity.peek()).toEqual(KNOWN);
    expect(slack.callsTo('auth.test')).toHaveLength(1);
  });

  it('after a failure answers undefined without asking for a while, then asks again', async () => {
    const { slack, identity, clock, lines } = await identityOnStandIn();
    slack.fail('auth.test', { status: 429, retryAfter: 5 });
    expect(await identity.get()).toBeUndefined();
    clock.now += IDENTITY_RETRY_MS - 1;
    expect(await identity.get()).toBeUndefined();
    expect(identity.peek()).toBeUndefined();
    expect(slack.callsTo('auth.test')).toHaveLength(1);
    clock.now += 1;
    expect(await identity.get()).toEqual(KNOWN);
    expect(slack.callsTo('auth.test')).toHaveLength(2);
    const warnings = lines.map((line) => JSON.parse(line) as { level: string; msg: string });
    expect(warnings.filter((w) => w.msg.startsWith('auth.test failed'))).toHaveLength(1);
  });

  it('calls auth.test through the one caller: its failure typed and counted like every Slack call', async () => {
    slack = await startSlackStandIn();
    const { client, logger, lines } = appSlackClient(slack.apiUrl, { logLevel: 'warn' });
    const reported: [string, string][] = [];
    const caller = createSlackCaller({
      client,
      logger,
      redact: (text) => text,
      onError: (method, code) => reported.push([method, code]),
    });
    slack.fail('auth.test', { error: 'internal_error' });
    expect(await createIdentity(caller, logger, () => 0).get()).toBeUndefined();
    expect(reported).toEqual([['auth.test', 'internal_error']]);
    const [warning] = lines.map((line) => JSON.parse(line) as { error?: { name?: string } });
    expect(warning?.error?.name).toBe('SlackCallError');
  });

  it('logs a refused token’s failure without writing the token', async () => {
    slack = await startSlackStandIn();
    // Neither configured as a secret nor shaped like a token: only leaving it out keeps it unwritten.
    const token = 'xoxb-test-revoked-not-real';
    const { caller, logger, lines } = appSlackClient(slack.apiUrl, { token, logLevel: 'warn', secrets: [] });
    const identity = createIdentity(caller, logger, () => 0);
    expect(await identity.get()).toBeUndefined();
    expect(lines.join('\n')).toContain('invalid_auth');
    expect(lines.join('\n')).not.toContain(token);
  });

  it('knows its workspace from the first request that names it, until auth.test says', async () => {
    const { slack, identity } = await identityOnStandIn();
    slack.fail('auth.test', { error: 'internal_error' });
    expect(identity.installedTeamId()).toBeUndefined();
    identity.noteInstallation('T0FIRST');
    identity.noteInstallation('T0OTHER');
    expect(identity.installedTeamId()).toBe('T0FIRST');
    await identity.get();
    expect(identity.installedTeamId()).toBe('T0FIRST');
  });

  it('takes auth.test’s workspace over one a request named', async () => {
    const { identity } = await identityOnStandIn();
    identity.noteInstallation('T0FROMREQUEST');
    await identity.get();
    expect(identity.installedTeamId()).toBe(TEAM_ID);
  });

  it('of an org-wide (Enterprise Grid) installation has a W… bot user and no workspace of its own', async () => {
    // auth.test for an org-level token, as Slack's organisation-wide apps reference shows it:
    // it names the organisation, not a workspace.
    const org = await listen((_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          ok: true,
          url: 'https://acme-org.enterprise.slack.com/',
          user_id: 'W0BOTUSER',
          bot_id: 'B0BOT',
          enterprise_id: 'E0ACME',
          is_enterprise_install: true,
        }),
      );
    });
    closeOrg = org.close;
    const { caller, logger } = appSlackClient(`${org.url}/api/`);
    const identity = createIdentity(caller, logger);
    expect(await identity.get()).toEqual({
      teamId: undefined,
      botUserId: 'W0BOTUSER',
      botId: 'B0BOT',
      url: 'https://acme-org.enterprise.slack.com/',
    });
    expect(identity.installation()).toEqual({ kind: 'organization', enterpriseId: 'E0ACME' });
    // The workspace a request names is one of the organisation's, not the bot's only one.
    identity.noteInstallation('T0ACMEDOCS');
    expect(identity.installation()).toEqual({ kind: 'organization', enterpriseId: 'E0ACME' });
    expect(identity.installedTeamId()).toBeUndefined();
  });
});

describe('the installation', () => {
  const ORG = { enterpriseId: 'E0ACME', workspaces: ['T0ACMEDOCS', 'T0ACMEENG'], botUserId: 'W0BOT' };

  it.each([
    ['the organisation’s own id', 'enterprise'],
    ['an empty one', 'empty'],
    ['none', 'absent'],
  ] as const)(
    'is the organisation when auth.test answers for it with %s as its team_id',
    async (_what, teamId) => {
      const { slack, identity } = await identityOnStandIn();
      slack.installOrgWide({ ...ORG, authTestTeamId: teamId });
      const known = await identity.get();
      expect(known).toMatchObject({ teamId: undefined, botUserId: 'W0BOT' });
      expect(identity.installation()).toEqual({ kind: 'organization', enterpriseId: 'E0ACME' });
      expect(identity.installedTeamId()).toBeUndefined();
    },
  );

  it('is the organisation a signed request names, while auth.test cannot answer', async () => {
    const { slack, identity } = await identityOnStandIn();
    slack.fail('auth.test', { error: 'internal_error' });
    await identity.get();
    identity.noteInstallation('E0ACME');
    identity.noteInstallation('T0ACMEDOCS');
    expect(identity.installation()).toEqual({ kind: 'organization', enterpriseId: 'E0ACME' });
  });

  it('lists an organisation’s workspaces once (auth.teams.list), for callers at the same time too', async () => {
    const { slack, identity } = await identityOnStandIn();
    slack.installOrgWide(ORG);
    await identity.get();
    const lists = await Promise.all([identity.organizationWorkspaces(), identity.organizationWorkspaces()]);
    for (const list of lists) expect([...(list ?? [])]).toEqual(['T0ACMEDOCS', 'T0ACMEENG']);
    await identity.organizationWorkspaces();
    expect(slack.callsTo('auth.teams.list')).toHaveLength(1);
  });

  it('never lists workspaces for a single-workspace install, nor before the installation is known', async () => {
    const { slack, identity } = await identityOnStandIn();
    slack.fail('auth.test', { error: 'internal_error' });
    await identity.get();
    expect(await identity.organizationWorkspaces()).toBeUndefined();
    identity.noteInstallation(TEAM_ID);
    expect(await identity.organizationWorkspaces()).toBeUndefined();
    expect(slack.callsTo('auth.teams.list')).toHaveLength(0);
  });
});

const ORG = { kind: 'organization', enterpriseId: 'E0ACME' };

describe('the installation an id names', () => {
  it('is a workspace for a T… id and an organisation for an E… id', () => {
    expect(installationOfId('T0TEST')).toEqual({ kind: 'workspace', teamId: 'T0TEST' });
    expect(installationOfId('E0ACME')).toEqual(ORG);
  });

  it('is none for anything else', () => {
    for (const id of ['U0ALICE', 'W0BOT', 'C0DOCS', 't0test', 'T', 'T0 TEST', '', null, 42, undefined])
      expect(installationOfId(id), String(id)).toBeUndefined();
  });
});

describe('the installation auth.test describes', () => {
  it('is the workspace of a workspace token', () => {
    expect(installationOfAuthTest({ team_id: 'T0TEST' })).toEqual({ kind: 'workspace', teamId: 'T0TEST' });
  });

  it('is only the workspace of a token installed in one workspace of a Grid organisation', () => {
    expect(
      installationOfAuthTest({
        team_id: 'T0ACMEDOCS',
        enterprise_id: 'E0ACME',
        is_enterprise_install: false,
      }),
    ).toEqual({ kind: 'workspace', teamId: 'T0ACMEDOCS' });
  });

  it.each([
    ['no team_id', {}],
    ['an empty team_id', { team_id: '' }],
    ['the organisation’s id as team_id', { team_id: 'E0ACME' }],
    ['a workspace’s id as team_id', { team_id: 'T0ACMEDOCS' }],
  ])('is the organisation of an organisation-wide token, with %s', (_what, team) => {
    expect(installationOfAuthTest({ ...team, enterprise_id: 'E0ACME', is_enterprise_install: true })).toEqual(
      ORG,
    );
  });

  it('is none when it names neither a workspace nor an organisation', () => {
    expect(installationOfAuthTest({})).toBeUndefined();
    expect(installationOfAuthTest({ team_id: '' })).toBeUndefined();
    expect(installationOfAuthTest({ is_enterprise_install: true, team_id: 'T0ACMEDOCS' })).toBeUndefined();
    expect(
      installationOfAuthTest({ is_enterprise_install: true, enterprise_id: 'not-an-org' }),
    ).toBeUndefined();
  });
});

describe('an organisation’s workspaces (auth.teams.list)', () => {
  let slack: SlackStandIn | undefined;
  afterEach(async () => {
    await slack?.close();
    slack = undefined;
  });

  /** The list on the app's client, against the stand-in as an organisation of `workspaces`. */
  async function orgOf(workspaces: string[]) {
    slack = await startSlackStandIn();
    slack.installOrgWide({ enterpriseId: 'E0ACME', workspaces, botUserId: 'W0BOT' });
    const { caller, logger, lines } = appSlackClient(slack.apiUrl, { logLevel: 'warn' });
    const clock = { now: 1_000_000 };
    return { slack, lines, clock, org: createOrgWorkspaces(caller, logger, () => clock.now) };
  }

  const ids = (n: number) => Array.from({ length: n }, (_, i) => `T0WS${i}`);
  const logged = (lines: string[], msg: string) =>
    lines.map((l) => JSON.parse(l) as { msg: string }).filter((l) => l.msg.startsWith(msg));

  it('reads every page, and keeps only workspace ids', async () => {
    const { slack, org } = await orgOf([...ids(WORKSPACES_PAGE_SIZE + 5), 'not-a-team']);
    const list = await org.list();
    expect(list?.size).toBe(WORKSPACES_PAGE_SIZE + 5);
    expect(list?.has('T0WS0')).toBe(true);
    expect(list?.has(`T0WS${WORKSPACES_PAGE_SIZE + 4}`)).toBe(true);
    expect(slack.callsTo('auth.teams.list').map((c) => c.args.cursor)).toEqual([
      undefined,
      String(WORKSPACES_PAGE_SIZE),
    ]);
  });

  it(`reads at most ${WORKSPACES_PAGES} pages, and says the rest are decided person by person`, async () => {
    const { slack, org, lines } = await orgOf(ids(WORKSPACES_PAGES * WORKSPACES_PAGE_SIZE + 1));
    expect((await org.list())?.size).toBe(WORKSPACES_PAGES * WORKSPACES_PAGE_SIZE);
    expect(slack.callsTo('auth.teams.list')).toHaveLength(WORKSPACES_PAGES);
    expect(logged(lines, 'the organisation has more workspaces than are read')).toHaveLength(1);
  });

  it('asks again only once the list is old', async () => {
    const { slack, org, clock } = await orgOf(['T0ACMEDOCS']);
    await org.list();
    clock.now += WORKSPACES_CACHE_MS - 1;
    await org.list();
    expect(slack.callsTo('auth.teams.list')).toHaveLength(1);
    clock.now += 1;
    slack.installOrgWide({
      enterpriseId: 'E0ACME',
      workspaces: ['T0ACMEDOCS', 'T0ACMENEW'],
      botUserId: 'W0BOT',
    });
    expect([...((await org.list()) ?? [])]).toEqual(['T0ACMEDOCS', 'T0ACMENEW']);
    expect(slack.callsTo('auth.teams.list')).toHaveLength(2);
  });

  it('fails closed: no list while Slack cannot say (an old one is not kept), asked again after a pause', async () => {
    const { slack, org, clock, lines } = await orgOf(['T0ACMEDOCS']);
    await org.list();
    clock.now += WORKSPACES_CACHE_MS;
    slack.fail('auth.teams.list', { error: 'internal_error' });
    expect(await org.list()).toBeUndefined();
    clock.now += WORKSPACES_RETRY_MS - 1;
    expect(await org.list()).toBeUndefined();
    expect(slack.callsTo('auth.teams.list')).toHaveLength(2);
    clock.now += 1;
    expect(await org.list()).toEqual(new Set(['T0ACMEDOCS']));
    expect(logged(lines, 'auth.teams.list failed')).toHaveLength(1);
  });
});
