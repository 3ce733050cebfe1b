/**
 * Payloads in the shapes Slack documents and sends, through the real receiver: each is either
 * processed or deliberately ignored, and one meant for the bot that cannot be read is logged.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, startHarness, stopChecked } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import { appMention, eventEnvelope, messageChanged } from '../helpers/payloads.js';
import { postSigned, SIGNING_SECRET } from '../helpers/signing.js';
import { TEAM_ID } from '../helpers/slack-stand-in.js';

let h: Harness;
afterEach(() => stopChecked(h));

let serial = 0;
const nextTs = () => `1700000800.${String(++serial).padStart(6, '0')}`;

/** An event in an Enterprise Grid envelope (the organisation named beside the workspace). */
const gridEvent = (event: Record<string, unknown>) =>
  postSigned(
    h.base(),
    JSON.stringify({
      ...JSON.parse(eventEnvelope(event)),
      enterprise_id: 'E0ORG',
      authorizations: [{ enterprise_id: 'E0ORG', team_id: TEAM_ID, user_id: 'U0BOT', is_bot: true }],
    }),
    { contentType: 'application/json', secret: SIGNING_SECRET },
  );

const ephemeralsTo = (user: string) =>
  h.slack.callsTo('chat.postEphemeral').filter((c) => c.args.user === user);

/** A `text` that is not text, as the event's schema would never expect. */
const notText = (secret: string) => ({ secret }) as unknown as string;

/** The log lines saying an event meant for the bot could not be read. */
const unreadable = () =>
  h.logs
    .map((l) => JSON.parse(l) as { msg: string; fields?: string[]; what?: string })
    .filter((l) => l.msg.startsWith('an event meant for the bot could not be read'));

describe('Enterprise Grid people (W… ids)', () => {
  it('start a job with a mention, steer it from its thread, and are named by the bot', async () => {
    h = await startHarness();
    const mention = { ...appMention({ text: '<@U0BOT> Document SSO', user: 'W0GRIDALICE' }), team: TEAM_ID };
    await gridEvent(mention);
    await waitFor('create call', () => h.agent.requestsFor('create').length === 1);
    const card = await waitFor('card', () => h.slack.threadPosts(mention.ts)[0]);
    await waitFor(
      'job active',
      async () => (await h.app.store.findJobByThread('C0GENERAL', mention.ts))?.phase === 'active',
    );
    expect(JSON.stringify(card.blocks)).toContain('<@W0GRIDALICE>');
    await gridEvent({
      type: 'message',
      channel: 'C0GENERAL',
      channel_type: 'channel',
      user: 'W0GRIDBOB',
      team: TEAM_ID,
      text: 'Also cover SCIM',
      ts: nextTs(),
      thread_ts: mention.ts,
    });
    await waitFor('follow-up', () => h.agent.requestsFor('message').length === 1);
    expect(h.agent.requestsFor('message')[0]?.body).toEqual({ prompt: 'Also cover SCIM' });
  });

  it('start a job in a direct message', async () => {
    h = await startHarness();
    const ts = nextTs();
    await gridEvent({
      type: 'message',
      channel: 'D0GRIDALICE',
      channel_type: 'im',
      user: 'W0GRIDALICE',
      team: TEAM_ID,
      text: 'Document SAML',
      ts,
    });
    await waitFor('create call', () => h.agent.requestsFor('create').length === 1);
    expect(await h.app.store.findJobByThread('D0GRIDALICE', ts)).toMatchObject({
      requesterId: 'W0GRIDALICE',
    });
  });
});

describe('shared channels (Slack Connect)', () => {
  it.each([
    ['user_team and source_team', { user_team: 'T0PARTNER', source_team: 'T0PARTNER' }],
    ['source_team alone', { source_team: 'T0PARTNER' }],
  ])('refuse a reply whose author is of another organisation, named by %s', async (_name, fields) => {
    // Guests allowed: nothing asks Slack about the author, so the event's own word must count.
    h = await startHarness({ ALLOW_GUESTS: 'true' });
    const { threadTs, channel } = await h.startJob();
    await h.event({
      channel,
      thread_ts: threadTs,
      user: 'U0EXTERNAL',
      text: 'publish our pricing',
      ...fields,
    });
    const note = await waitFor('private refusal', () => ephemeralsTo('U0EXTERNAL')[0]);
    expect(String(note.args.text)).toContain('serves another Slack workspace');
    await h.settled();
    expect(h.agent.requestsFor('message')).toHaveLength(0);
  });
});

describe('tombstones', () => {
  it('a tombstone message in a job’s thread is no follow-up', async () => {
    h = await startHarness();
    const { threadTs, channel } = await h.startJob();
    await h.event({
      channel,
      thread_ts: threadTs,
      subtype: 'tombstone',
      hidden: true,
      user: 'USLACKBOT',
      text: 'This message was deleted.',
    });
    // Control: a reply after it is taken.
    await h.event({ channel, thread_ts: threadTs, user: 'U0BOB', text: 'Cover retries' });
    await waitFor('follow-up', () => h.agent.requestsFor('message').length === 1);
    await h.settled();
    expect(h.agent.requestsFor('message').map((r) => r.body)).toEqual([{ prompt: 'Cover retries' }]);
    expect(unreadable()).toEqual([]);
  });

  it('a root left as a tombstone, reported without previous_message, takes its waiting mention back', async () => {
    h = await startHarness();
    h.slack.outage.begin('users.info');
    const mention = appMention({ text: '<@U0BOT> Document webhooks' });
    await h.anyEvent(mention);
    await waitFor('held note', () => ephemeralsTo('U0ALICE')[0]);
    const { previous_message: _previous, ...tombstone } = messageChanged({
      ts: mention.ts,
      thread_ts: mention.ts,
      user: 'USLACKBOT',
      text: 'This message was deleted.',
      previous: mention.text,
    });
    await h.anyEvent({ ...tombstone, message: { ...tombstone.message, subtype: 'tombstone', hidden: true } });
    await waitFor(
      'job withdrawn',
      async () => (await h.app.store.findJobByThread('C0GENERAL', mention.ts))?.phase === 'not_started',
    );
    h.slack.outage.end('users.info');
    await h.settled();
    expect(h.agent.requestsFor('create')).toHaveLength(0);
  });
});

describe('events meant for the bot that cannot be read', () => {
  it('are logged once each, with the fields that failed and none of their values', async () => {
    h = await startHarness();
    const { threadTs, channel } = await h.startJob();
    // A reply in the job's thread whose text is not text.
    await h.event({ channel, thread_ts: threadTs, user: 'U0BOB', text: notText('classified plans') });
    // A direct message without its author.
    await h.event({ channel: 'D0ALICE', channel_type: 'im', user: undefined, text: 'classified DM' });
    // A mention whose author is not an id.
    await h.anyEvent({ ...appMention({ text: '<@U0BOT> classified mention' }), user: { id: 'U0ALICE' } });
    await waitFor('three log lines', () => unreadable().length >= 3);
    // Not meant for the bot: a thread without a job, and another app's message.
    await h.event({ channel, thread_ts: '1700000000.999999', user: 'U0BOB', text: notText('x') });
    await h.event({ channel, thread_ts: threadTs, bot_id: 'B0OTHER', user: undefined, text: 'build ok' });
    await h.settled();
    const lines = unreadable();
    expect(lines.map((l) => [l.what, l.fields])).toEqual([
      ['reply', ['text: invalid_type']],
      ['direct message', ['user: invalid_type']],
      ['mention', ['user: invalid_type']],
    ]);
    expect(JSON.stringify(lines)).not.toContain('classified');
    expect(h.agent.requestsFor('message')).toHaveLength(0);
  });
});
