import { afterEach, describe, expect, it } from 'vitest';
import { createSlackCaller } from '../../src/slack/caller.js';
import { createIdentity, IDENTITY_RETRY_MS } from '../../src/slack/identity.js';
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
  const { caller, logger, lines } = appSlackClient(slack.apiUrl, { logLevel: 'warn' });
  const clock = { now: 1_000_000 };
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
