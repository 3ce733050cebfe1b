import { describe, expect, it } from 'vitest';
import { useHarness } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import { BOT_ID, BOT_USER_ID } from '../helpers/slack-stand-in.js';

const h = useHarness();

describe('thread replies', () => {
  it('sends a reply as a follow-up, reacts, and posts a second outcome in the same thread', async () => {
    const { threadTs, jobId, channel } = await h.startJob();
    h.agent.complete(jobId, 'https://github.com/example/docs/pull/1');
    await waitFor('first outcome', () => h.slack.threadPosts(threadTs).length === 1);

    const res = await h.event({
      channel,
      thread_ts: threadTs,
      user: 'U0BOB',
      text: 'Also mention <@U0CAROL|carol> &amp; async',
    });
    expect(res.status).toBe(200);
    await waitFor('follow-up sent', () => h.agent.requestsFor('message').length === 1);
    expect(h.agent.requestsFor('message')[0]).toMatchObject({
      jobId,
      body: { prompt: 'Also mention @carol & async' },
    });
    const eyes = await waitFor('reaction', () =>
      h.slack.callsTo('reactions.add').find((c) => c.args.name === 'eyes'),
    );
    expect(eyes.args).toMatchObject({ channel, name: 'eyes' });

    h.agent.complete(jobId, 'https://github.com/example/docs/pull/1');
    const second = await waitFor('second outcome', () => h.slack.threadPosts(threadTs)[1]);
    // Both the requester and the author of the follow-up are told.
    expect(second.text).toContain('<@U0ALICE>');
    expect(second.text).toContain('<@U0BOB>');
    const job = await h.app.store.findJobByThread(channel, threadTs);
    expect(job?.runCount).toBe(2);
    await h.settled();
    expect(h.slack.threadPosts(threadTs)).toHaveLength(2);
  });

  it('answers a reply sent while the agent was still working with one outcome for both runs', async () => {
    const { threadTs, jobId, channel } = await h.startJob();
    await h.event({ channel, thread_ts: threadTs, user: 'U0BOB', text: 'and the CLI too' });
    await waitFor('follow-up sent', () => h.agent.requestsFor('message').length === 1);
    h.agent.complete(jobId, 'https://github.com/example/docs/pull/5');
    const post = await waitFor('outcome', () => h.slack.threadPosts(threadTs)[0]);
    expect(post.text).toContain('<@U0ALICE>');
    expect(post.text).toContain('<@U0BOB>');
    expect(post.metadata?.event_payload).toMatchObject({ kind: 'outcome', run: 2, covers: '1,2' });
    await h.settled();
    expect(h.slack.threadPosts(threadTs)).toHaveLength(1);
    const runs = await h.app.store.getRuns((await h.app.store.findJobByThread(channel, threadTs))?.id ?? 0);
    expect(runs.map((r) => r.outcome)).toEqual(['completed_pr', 'completed_pr']);
  });

  it('ignores a poll answer that was overtaken by a follow-up', async () => {
    const { threadTs, jobId, channel } = await h.startJob();
    // The next poll sees "completed" but answers late; a follow-up starts a new run meanwhile.
    const gets = h.agent.requestsFor('get').length;
    h.agent.complete(jobId, 'https://github.com/example/docs/pull/6');
    h.agent.fail('get', { staleAnswerMs: 800 });
    await waitFor('slow poll under way', () => h.agent.requestsFor('get').length > gets);
    await h.event({ channel, thread_ts: threadTs, user: 'U0BOB', text: 'one more thing' });
    await waitFor('follow-up sent', () => h.agent.requestsFor('message').length === 1);
    await waitFor('late poll answer ignored', () => h.logs.some((l) => l.includes('poll answer ignored')));
    await h.settled();
    expect(h.slack.threadPosts(threadTs)).toHaveLength(0);
    expect((await h.app.store.findJobByThread(channel, threadTs))?.phase).toBe('active');
    h.agent.complete(jobId, 'https://github.com/example/docs/pull/7');
    const post = await waitFor('outcome of the new run', () => h.slack.threadPosts(threadTs)[0]);
    expect(post.text).toContain('pull/7');
  });

  it('never sends a re-delivered event twice', async () => {
    const { threadTs, channel } = await h.startJob();
    const ts = '1700000200.000001';
    for (let retry = 0; retry <= 3; retry++) {
      const res = await h.event(
        { channel, thread_ts: threadTs, ts, text: 'Use British spelling' },
        { event_id: 'Ev0SAME' },
        retry
          ? { headers: { 'x-slack-retry-num': String(retry), 'x-slack-retry-reason': 'http_timeout' } }
          : {},
      );
      expect(res.status).toBe(200);
    }
    // The same message under another event id (e.g. Socket Mode duplicate) is still one follow-up.
    await h.event(
      { channel, thread_ts: threadTs, ts, text: 'Use British spelling' },
      { event_id: 'Ev0OTHER' },
    );
    await waitFor('follow-up sent', () => h.agent.requestsFor('message').length === 1);
    await h.settled();
    expect(h.agent.requestsFor('message')).toHaveLength(1);
  });

  it.each([
    ['a bot message', { bot_id: 'B0OTHER', subtype: 'bot_message' }],
    ["the bot's own message", { user: BOT_USER_ID, bot_id: BOT_ID }],
    ['an edit', { subtype: 'message_changed' }],
    ['a deletion', { subtype: 'message_deleted' }],
    ['a join', { subtype: 'channel_join' }],
  ])('ignores %s', async (_what, fields) => {
    const { threadTs, channel } = await h.startJob();
    const res = await h.event({ channel, thread_ts: threadTs, text: 'should not be sent', ...fields });
    expect(res.status).toBe(200);
    // Control: a plain human reply in the same thread after it is sent, and only that one.
    await h.event({ channel, thread_ts: threadTs, text: 'this one is' });
    await waitFor('control follow-up', () => h.agent.requestsFor('message').length === 1);
    await h.settled();
    expect(h.agent.requestsFor('message').map((r) => r.body)).toEqual([{ prompt: 'this one is' }]);
  });

  it('ignores replies in threads that belong to no job, and top-level messages', async () => {
    const { channel, threadTs } = await h.startJob();
    await h.event({ channel, thread_ts: '1699999999.000001', text: 'unrelated thread' });
    await h.event({ channel, text: 'top level chatter' });
    // Control: a reply in the job's thread after them is sent, and only that one.
    await h.event({ channel, thread_ts: threadTs, text: 'in the thread' });
    await waitFor('control follow-up', () => h.agent.requestsFor('message').length === 1);
    await h.settled();
    expect(h.agent.requestsFor('message').map((r) => r.body)).toEqual([{ prompt: 'in the thread' }]);
    expect(h.slack.callsTo('chat.postEphemeral')).toHaveLength(0);
  });

  it('keeps a reply that arrives before the create call answered and sends it after', async () => {
    h.agent.fail('create', { delayMs: 400 });
    await h.command();
    const root = await waitFor('root', () => h.slack.messages.find((m) => !m.thread_ts));
    await waitFor('create in flight', () => h.agent.requestsFor('create').length === 1);
    await h.event({ channel: root.channel, thread_ts: root.ts, text: 'and add a troubleshooting section' });
    const job = await waitFor('job recorded', () => h.app.store.findJobByThread(root.channel, root.ts));
    await waitFor('reply recorded', async () => (await h.app.store.getRuns(job.id)).length === 2);
    // Kept, not sent, while the create call has not answered.
    expect(h.agent.requestsFor('message')).toHaveLength(0);
    await waitFor('queued follow-up sent', () => h.agent.requestsFor('message').length === 1, 3_000);
    expect(h.agent.requestsFor('message')[0]?.body).toEqual({ prompt: 'and add a troubleshooting section' });
  });

  it.each([
    [429, { 'retry-after': '1800' }, 'hourly limit'],
    [401, {}, 'refused this bot'],
    [404, {}, 'no longer knows this job'],
    [400, {}, 'rejected the instruction: `nope`'],
    [500, {}, 'cannot tell whether the agent received'],
  ])('explains a %i on follow-up in the thread', async (status, headers, words) => {
    const { threadTs, channel } = await h.startJob();
    h.agent.fail('message', { status, headers, body: JSON.stringify({ error: 'nope' }) });
    await h.event({ channel, thread_ts: threadTs, user: 'U0BOB', text: 'more please' });
    const post = await waitFor('explanation', () =>
      h.slack.threadPosts(threadTs).find((m) => m.text.includes(words)),
    );
    expect(post.text).toContain('<@U0BOB>');
    expect(h.agent.requestsFor('message')).toHaveLength(1);
  });

  it('tells the author privately when a reply has no text', async () => {
    const { threadTs, channel } = await h.startJob();
    await h.event({ channel, thread_ts: threadTs, subtype: 'file_share', text: '' });
    const eph = await waitFor('ephemeral', () => h.slack.callsTo('chat.postEphemeral')[0]);
    expect(eph.args).toMatchObject({ channel, user: 'U0ALICE', thread_ts: threadTs });
    expect(h.agent.requestsFor('message')).toHaveLength(0);
  });
});
