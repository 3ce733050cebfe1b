import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, startHarness, stopChecked } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import { appMention } from '../helpers/payloads.js';

let h: Harness;
afterEach(() => stopChecked(h));

describe('follow-up mode, asides and batches', () => {
  it('never sends an aside (default marker //), and sends the replies around it', async () => {
    h = await startHarness();
    const { threadTs, channel } = await h.startJob();
    await h.event({ channel, thread_ts: threadTs, text: '// Ann, this is the bot I mentioned' });
    await h.event({ channel, thread_ts: threadTs, text: '  //also an aside' });
    await h.event({ channel, thread_ts: threadTs, text: 'Use the v2 endpoint // not v1' });
    await waitFor('follow-up', () => h.agent.requestsFor('message').length === 1);
    await h.settled();
    expect(h.agent.requestsFor('message').map((r) => r.body?.prompt)).toEqual([
      'Use the v2 endpoint // not v1',
    ]);
  });

  it('uses the configured aside marker, or none', async () => {
    h = await startHarness({ ASIDE_MARKER: '(aside)' });
    const { threadTs, channel } = await h.startJob();
    await h.event({ channel, thread_ts: threadTs, text: '(aside) lunch?' });
    await h.event({ channel, thread_ts: threadTs, text: '// now sent' });
    await waitFor('follow-up', () => h.agent.requestsFor('message').length === 1);
    await h.settled();
    expect(h.agent.requestsFor('message').map((r) => r.body?.prompt)).toEqual(['// now sent']);
  });

  it('in mention mode sends only replies that mention the bot, without the mention', async () => {
    h = await startHarness({ FOLLOW_UP_MODE: 'mention' });
    const { threadTs, channel, jobId } = await h.startJob();
    await h.event({ channel, thread_ts: threadTs, text: 'chatting among ourselves' });
    const mention = appMention({ text: '<@U0BOT> add a table of limits', thread_ts: threadTs, channel });
    // Slack sends a mention in a thread both as a message and as app_mention.
    await h.event({ channel, thread_ts: threadTs, ts: mention.ts, text: mention.text });
    await h.anyEvent(mention);
    await waitFor('follow-up', () => h.agent.requestsFor('message').length === 1);
    await h.settled();
    expect(h.agent.requestsFor('message')).toHaveLength(1);
    expect(h.agent.requestsFor('message')[0]).toMatchObject({
      jobId,
      body: { prompt: 'add a table of limits' },
    });
    const root = h.slack.messages.find((m) => m.ts === threadTs);
    expect(JSON.stringify(root?.blocks)).toContain('Mention @docs-agent in this thread');
  });

  it('sends replies within the batch window as one follow-up, and a later one on its own', async () => {
    h = await startHarness({ FOLLOW_UP_BATCH_MS: '600' });
    const { threadTs, channel, jobId } = await h.startJob();
    const started = Date.now();
    await h.event({ channel, thread_ts: threadTs, user: 'U0BOB', text: 'First, fix the title' });
    await h.event({ channel, thread_ts: threadTs, user: 'U0CARL', text: 'and add an example' });
    await h.event({ channel, thread_ts: threadTs, user: 'U0BOB', text: 'in Python' });
    await waitFor('batched follow-up', () => h.agent.requestsFor('message').length === 1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(550);
    expect(h.agent.requestsFor('message')[0]).toMatchObject({
      jobId,
      body: { prompt: 'First, fix the title\n\nand add an example\n\nin Python' },
    });
    // Each reply gets its own "received" emoji; the job counts one run for the batch.
    await waitFor(
      'three reactions',
      () => h.slack.callsTo('reactions.add').filter((c) => c.args.name === 'eyes').length === 3,
    );
    const job = await h.app.store.findJobByThread(channel, threadTs);
    expect(job?.runCount).toBe(2);

    // The batch went out: a reply now starts a new one.
    await h.event({ channel, thread_ts: threadTs, text: 'One more thing' });
    await waitFor('second follow-up', () => h.agent.requestsFor('message').length === 2);
    expect(h.agent.requestsFor('message')[1]?.body?.prompt).toBe('One more thing');

    // Both authors of the batch hear about its outcome.
    h.agent.complete(jobId, null);
    const outcome = await waitFor('outcome', () => h.slack.threadPosts(threadTs)[0]);
    for (const who of ['<@U0ALICE>', '<@U0BOB>', '<@U0CARL>']) expect(outcome.text).toContain(who);
  });

  it('marks every reply of a refused batch failed, and tells every author', async () => {
    h = await startHarness({ FOLLOW_UP_BATCH_MS: '300' });
    const { threadTs, channel } = await h.startJob();
    h.agent.fail('message', { status: 429, headers: { 'retry-after': '3600' } });
    await h.event({ channel, thread_ts: threadTs, user: 'U0BOB', text: 'one' });
    await h.event({ channel, thread_ts: threadTs, user: 'U0CARL', text: 'two' });
    const note = await waitFor('note', () => h.slack.threadPosts(threadTs)[0]);
    expect(note.text).toContain('<@U0BOB> <@U0CARL>');
    expect(note.text).toContain('hourly limit');
    const runs = await h.app.store.getRuns((await h.app.store.findJobByThread(channel, threadTs))?.id ?? 0);
    expect(runs.filter((r) => r.kind === 'follow_up').map((r) => r.state)).toEqual(['failed', 'failed']);
  });
});
