import { afterEach, describe, expect, it } from 'vitest';
import { createRedactor } from '../../src/logging/logger.js';
import { escapeMrkdwn, md } from '../../src/slack/mrkdwn.js';
import { gatewayOnStandIn } from '../helpers/delivery-world.js';
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

describe('what the gateway shows people', () => {
  const SECRET = 'pass<word>&Q7tail';

  it('is masked on the way out, leaving message metadata as the bot wrote it', async () => {
    const world = await gatewayOnStandIn({ ownBotId: () => BOT_ID, redact: createRedactor([SECRET]) });
    slack = world.slack;
    const { gateway } = world;
    const text = md`echo ${escapeMrkdwn(SECRET)}`;
    const metadata = { eventType: 'docs_agent_note', key: 'note:1' };
    const root = await gateway.postMessage({
      channel: 'C0GENERAL',
      text,
      blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }],
      metadata,
    });
    await gateway.updateMessage({ channel: 'C0GENERAL', ts: root, text });
    await gateway.postEphemeral({ channel: 'C0GENERAL', user: 'U0ALICE', text });
    await gateway.respond(slack.responseUrl('r1'), text);
    const modal = { type: 'modal', title: { type: 'plain_text', text: 'Docs' } };
    await gateway.openView('trigger', {
      ...modal,
      blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }],
    });
    await gateway.publishHome('U0ALICE', {
      type: 'home',
      blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }],
    });
    await gateway.assistantThread({
      channel: 'D0ALICE',
      threadTs: '1.2',
      status: SECRET,
      title: SECRET,
      prompts: [{ title: SECRET, message: SECRET }],
    });
    // A post made without metadata is looked for by its text, as it was posted: masked.
    const unmarked = await gateway.postMessage({ channel: 'C0GENERAL', threadTs: root, text });
    expect(await gateway.findUnmarked({ channel: 'C0GENERAL', threadTs: root, oldest: 1, text })).toBe(
      unmarked,
    );

    const sent = [...slack.calls.map((c) => c.args), ...slack.responses.map((r) => r.body)];
    expect(slack.responses).toHaveLength(1);
    for (const method of ['chat.update', 'chat.postEphemeral', 'views.open', 'views.publish'])
      expect(slack.callsTo(method)).toHaveLength(1);
    expect(slack.callsTo('assistant.threads.setSuggestedPrompts')).toHaveLength(1);
    expect(JSON.stringify(sent)).not.toContain('Q7tail');
    expect(JSON.stringify(sent)).toContain('echo [redacted]');
    expect(slack.messages.find((m) => m.ts === root)?.metadata).toEqual({
      event_type: 'docs_agent_note',
      event_payload: { key: 'note:1' },
    });
  });
});
