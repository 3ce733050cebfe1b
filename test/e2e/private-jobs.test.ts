import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, startHarness, stopChecked } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import { appMention, paneEvent } from '../helpers/payloads.js';
import type { StoredMessage } from '../helpers/slack-stand-in.js';

let h: Harness;
afterEach(() => stopChecked(h));

const NEWS = 'C0NEWS';
const PR = 'https://github.com/example/docs/pull/21';
/** Words that belong to the place they were written in. */
const WORDS = 'Document the unannounced Falcon pricing tier';
let counter = 0;
const nextTs = () => `1700000900.${String(++counter).padStart(6, '0')}`;

const news = () => h.slack.messages.filter((m) => m.channel === NEWS);

/** A message from Alice in her direct message with the bot (`thread_ts`: the assistant pane's thread). */
const dm = (text: string, threadTs?: string) => ({
  channel: 'D0ALICE',
  channel_type: 'im',
  text,
  ts: nextTs(),
  ...(threadTs ? { thread_ts: threadTs } : {}),
});

/** Runs the job that starts in `thread` of `channel` to a pull request; returns the notification. */
async function notified(channel: string, thread: string): Promise<StoredMessage> {
  const job = await waitFor('job active', async () => {
    const j = await h.app.store.findJobByThread(channel, thread);
    return j?.phase === 'active' ? j : undefined;
  });
  h.agent.complete(job.agentJobId ?? '', PR);
  const post = await waitFor('notification', () => news()[0]);
  await h.settled();
  expect(news()).toHaveLength(1);
  return post;
}

/** What a private job's notice must never carry: its words, or its place (a mention or a link). */
function expectNothingOf(post: StoredMessage, place: string) {
  const all = JSON.stringify(post);
  expect(all).not.toContain('Falcon');
  expect(all).not.toContain(place);
  expect(all).not.toContain('/archives/');
  // Not even when its thread started: the metadata is readable by the channel too.
  expect(post.metadata?.event_payload.thread ?? null).toBeNull();
  expect(post.text).toContain(`<${PR}|Review the pull request>`);
}

describe('a job asked for in private, announced in the notification channel', () => {
  it('from a direct message: the outcome and the pull request, not its words nor the conversation', async () => {
    h = await startHarness({ NOTIFY_CHANNEL_ID: NEWS });
    const message = dm(WORDS);
    await h.event(message);
    const post = await notified('D0ALICE', message.ts);
    expectNothingOf(post, 'D0ALICE');
    expect(post.text).toContain('Asked for in private');
    // The requester's own thread still has everything.
    const card = h.slack.threadPosts(message.ts)[0];
    expect(card?.text).toContain('Falcon');
    expect(await h.app.store.findJobByThread('D0ALICE', message.ts)).toMatchObject({ privacy: 'direct' });
  });

  it('from the assistant pane beside a public channel: the same', async () => {
    h = await startHarness({ NOTIFY_CHANNEL_ID: NEWS });
    const thread = nextTs();
    await h.anyEvent(paneEvent('started', thread, 'C0GENERAL'));
    await h.event(dm(WORDS, thread));
    const post = await notified('D0ALICE', thread);
    expectNothingOf(post, 'D0ALICE');
    expect(await h.app.store.findJobByThread('D0ALICE', thread)).toMatchObject({
      privacy: 'pane',
      contextChannelId: 'C0GENERAL',
    });
  });

  it('from a private channel: neither its words nor the channel', async () => {
    h = await startHarness({ NOTIFY_CHANNEL_ID: NEWS });
    h.slack.privateChannels.add('C0SECRET');
    const mention = appMention({ channel: 'C0SECRET', text: `<@U0BOT> ${WORDS}` });
    await h.anyEvent(mention);
    const post = await notified('C0SECRET', mention.ts);
    expectNothingOf(post, 'C0SECRET');
  });

  it('from a channel Slack could not describe: treated as private (fails closed)', async () => {
    h = await startHarness({ NOTIFY_CHANNEL_ID: NEWS });
    h.slack.fail('conversations.info', { error: 'internal_error' });
    const mention = appMention({ channel: 'C0QUIET', text: `<@U0BOT> ${WORDS}` });
    await h.anyEvent(mention);
    const post = await notified('C0QUIET', mention.ts);
    expectNothingOf(post, 'C0QUIET');
    expect(await h.app.store.findJobByThread('C0QUIET', mention.ts)).toMatchObject({ privacy: 'unknown' });
  });

  it('from a slash command in a private channel (Slack names it `privategroup`)', async () => {
    h = await startHarness({ NOTIFY_CHANNEL_ID: NEWS });
    const res = await h.command({ channel_id: 'C0SECRET', channel_name: 'privategroup', text: WORDS });
    expect(res.status).toBe(200);
    const root = await waitFor('root', () => h.slack.messages.find((m) => m.channel === 'C0SECRET'));
    const post = await notified('C0SECRET', root.ts);
    expectNothingOf(post, 'C0SECRET');
    // Slack's name for the channel was enough: nothing more was asked.
    expect(h.slack.callsTo('conversations.info')).toHaveLength(0);
  });

  it('with NOTIFY_PRIVATE_JOBS=quote: its words quoted, still no link to where they were written', async () => {
    h = await startHarness({ NOTIFY_CHANNEL_ID: NEWS, NOTIFY_PRIVATE_JOBS: 'quote' });
    const message = dm(WORDS);
    await h.event(message);
    const post = await notified('D0ALICE', message.ts);
    expect(post.text).toContain('Falcon');
    expect(post.text).not.toContain('D0ALICE');
    expect(post.text).not.toContain('/archives/');
  });
});

describe('a job in a public channel', () => {
  it('is announced with its words and its thread, as before', async () => {
    h = await startHarness({ NOTIFY_CHANNEL_ID: NEWS });
    const mention = appMention({ channel: 'C0GENERAL', text: `<@U0BOT> ${WORDS}` });
    await h.anyEvent(mention);
    const post = await notified('C0GENERAL', mention.ts);
    expect(post.text).toContain('Falcon');
    expect(post.text).toContain('<#C0GENERAL>');
    expect(post.text).toContain(`/archives/C0GENERAL/`);
    expect(await h.app.store.findJobByThread('C0GENERAL', mention.ts)).toMatchObject({ privacy: 'public' });
  });
});
