import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, startHarness, stopChecked } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import { appMention } from '../helpers/payloads.js';
import type { StoredMessage } from '../helpers/slack-stand-in.js';

let h: Harness;
afterEach(() => stopChecked(h));

const NEWS = 'C0NEWS';
const PR = 'https://github.com/example/docs/pull/34';
/** Words that belong to the place they were written in. */
const WORDS = 'Document the unannounced Falcon pricing tier';
/** How long Slack takes to answer conversations.info in these tests: longer than any ack may take. */
const SLOW_INFO_MS = 1_200;
/**
 * An acknowledgement that waited for conversations.info takes at least its answer (or the old
 * 0.8 s cap on it); one that did not is tens of milliseconds on loopback.
 */
const ACK_WITHOUT_LOOKUP_MS = 600;

const news = () => h.slack.messages.filter((m) => m.channel === NEWS);

/** Sends `request` and says how long Slack waited for its acknowledgement, in milliseconds. */
async function timed(request: () => Promise<{ status: number }>): Promise<number> {
  const started = performance.now();
  const res = await request();
  expect(res.status).toBe(200);
  return performance.now() - started;
}

/**
 * The job in `thread` of `channel` once the agent has it and Slack's word on the channel is
 * recorded: neither the card nor the create call waits for that word (the job counts as private
 * until it comes).
 */
const active = (channel: string, thread: string) =>
  waitFor('job active, its privacy recorded', async () => {
    const job = await h.app.store.findJobByThread(channel, thread);
    return job?.phase === 'active' && job.privacy !== 'unknown' ? job : undefined;
  });

/** Runs the job to a pull request; returns the notification channel's post. */
async function notified(agentJobId: string | null): Promise<StoredMessage> {
  h.agent.complete(agentJobId ?? '', PR);
  const post = await waitFor('notification', () => news()[0]);
  await h.settled();
  expect(news()).toHaveLength(1);
  return post;
}

function expectNoWordsOf(post: StoredMessage, place: string) {
  const all = JSON.stringify(post);
  expect(all).not.toContain('Falcon');
  expect(all).not.toContain(place);
  expect(all).not.toContain('/archives/');
  expect(post.text).toContain(`<${PR}|Review the pull request>`);
}

describe('who can read the channel is asked after Slack is acknowledged', () => {
  it('a command: acknowledged without waiting for conversations.info; the job still ends up private', async () => {
    h = await startHarness({ NOTIFY_CHANNEL_ID: NEWS });
    h.slack.privateChannels.add('C0SECRET');
    h.slack.fail('conversations.info', { delayMs: SLOW_INFO_MS });
    // A name Slack gives a private channel only as `privategroup`: this one says nothing sure.
    const sent = performance.now();
    const took = await timed(() =>
      h.command({ channel_id: 'C0SECRET', channel_name: 'secret', text: WORDS }),
    );
    expect(took).toBeLessThan(ACK_WITHOUT_LOOKUP_MS);
    const root = await waitFor('root', () => h.slack.messages.find((m) => m.channel === 'C0SECRET'), 5_000);
    // The card did not wait for Slack's word on the channel either.
    expect(performance.now() - sent).toBeLessThan(SLOW_INFO_MS);
    const job = await active('C0SECRET', root.ts);
    expect(job.privacy).toBe('private');
    expectNoWordsOf(await notified(job.agentJobId), 'C0SECRET');
  });

  it('a mention: the same', async () => {
    h = await startHarness({ NOTIFY_CHANNEL_ID: NEWS });
    h.slack.privateChannels.add('C0SECRET');
    h.slack.fail('conversations.info', { delayMs: SLOW_INFO_MS });
    const mention = appMention({ channel: 'C0SECRET', text: `<@U0BOT> ${WORDS}` });
    const took = await timed(() => h.anyEvent(mention));
    expect(took).toBeLessThan(ACK_WITHOUT_LOOKUP_MS);
    const job = await active('C0SECRET', mention.ts);
    expect(job.privacy).toBe('private');
    expectNoWordsOf(await notified(job.agentJobId), 'C0SECRET');
  });
});

describe('a channel made private after its job was accepted as public', () => {
  it('is announced without its words, and the job is recorded private', async () => {
    h = await startHarness({ NOTIFY_CHANNEL_ID: NEWS });
    const mention = appMention({ channel: 'C0TURNED', text: `<@U0BOT> ${WORDS}` });
    await h.anyEvent(mention);
    const job = await active('C0TURNED', mention.ts);
    expect(job.privacy).toBe('public');
    // What the running instance remembers of the channel (a minute) is gone after a restart.
    await h.restart();
    h.slack.privateChannels.add('C0TURNED');
    expectNoWordsOf(await notified(job.agentJobId), 'C0TURNED');
    expect(await h.app.store.findJobByThread('C0TURNED', mention.ts)).toMatchObject({ privacy: 'private' });
  });
});
