import { afterEach, describe, expect, it } from 'vitest';
import { md } from '../../src/slack/mrkdwn.js';
import { gatewayOnStandIn } from '../helpers/gateway-on-stand-in.js';
import { BOT_ID, type HumanMessage, type SlackStandIn } from '../helpers/slack-stand-in.js';

let slack: SlackStandIn | undefined;
afterEach(async () => {
  await slack?.close();
});

describe('finding the bot’s own posts by their metadata', () => {
  it('does not take another app’s message carrying the same metadata for the bot’s post', async () => {
    const world = await gatewayOnStandIn({ ownBotId: () => BOT_ID });
    slack = world.slack;
    const { gateway } = world;
    const metadata = { eventType: 'docs_agent_post', key: 'outcome:1:1' };
    const root = await gateway.postMessage({ channel: 'C0DOCS', text: md`root` });
    // Metadata is readable and writable by every app in the conversation.
    slack.humans.push({
      channel: 'C0DOCS',
      ts: '1800000000.000100',
      thread_ts: root,
      user: 'U0OTHERAPP',
      bot_id: 'B0OTHER',
      text: 'looks like the outcome',
      metadata: { event_type: metadata.eventType, event_payload: { key: metadata.key } },
    } as HumanMessage);
    expect(await gateway.findPosted({ channel: 'C0DOCS', threadTs: root, metadata })).toBeUndefined();
    const own = await gateway.postMessage({
      channel: 'C0DOCS',
      threadTs: root,
      text: md`the outcome`,
      metadata,
    });
    expect(await gateway.findPosted({ channel: 'C0DOCS', threadTs: root, metadata })).toBe(own);
  });
});

describe('message metadata as Slack takes it', () => {
  it('sends no null in the event payload, and the post is still found by its key', async () => {
    const world = await gatewayOnStandIn({ ownBotId: () => BOT_ID });
    slack = world.slack;
    const { gateway } = world;
    const root = await gateway.postMessage({ channel: 'C0DOCS', text: md`root` });
    // A first instruction's outcome: no source message, and no run when it never started.
    const metadata = {
      eventType: 'docs_agent_post',
      key: 'outcome:1:1',
      fields: { kind: 'outcome', run: null, source: null },
    };
    const ts = await gateway.postMessage({ channel: 'C0DOCS', threadTs: root, text: md`done`, metadata });
    expect(slack.threadPosts(root)[0]?.metadata).toEqual({
      event_type: 'docs_agent_post',
      event_payload: { kind: 'outcome', key: 'outcome:1:1' },
    });
    expect(slack.invalid).toEqual([]);
    expect(await gateway.findPosted({ channel: 'C0DOCS', threadTs: root, metadata })).toBe(ts);
  });
});

describe('account facts (users.info)', () => {
  it('names a Grid person’s workspace and organisation, and a Slack Connect person’s own workspace', async () => {
    const world = await gatewayOnStandIn();
    slack = world.slack;
    slack.gridMembers.set('W0ANNA', { teamId: 'T0ACMEDOCS', enterpriseId: 'E0ACME' });
    slack.externalMembers.set('U0EXT', 'T0OTHER');
    expect(await world.gateway.userInfo('W0ANNA')).toMatchObject({
      teamId: 'T0ACMEDOCS',
      enterpriseId: 'E0ACME',
    });
    const external = await world.gateway.userInfo('U0EXT');
    expect(external.teamId).toBe('T0OTHER');
    expect(external.enterpriseId).toBeUndefined();
  });
});
