import { afterEach, describe, expect, it } from 'vitest';
import {
  createOrgWorkspaces,
  WORKSPACES_CACHE_MS,
  WORKSPACES_PAGE_SIZE,
  WORKSPACES_PAGES,
  WORKSPACES_RETRY_MS,
} from '../../src/slack/org-workspaces.js';
import { appSlackClient } from '../helpers/slack-client.js';
import { type SlackStandIn, startSlackStandIn } from '../helpers/slack-stand-in.js';

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

describe('an organisation’s workspaces (auth.teams.list)', () => {
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
