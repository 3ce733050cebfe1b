import { describe, expect, it } from 'vitest';
import { WARM_UP_CHANNEL, WARM_UP_USER } from '../../src/warm-start.js';
import { useHarness } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';

const h = useHarness();

describe('a job from command to outcome', () => {
  it('acks at once, posts the root, creates the job with the exact prompt, and posts the PR link', async () => {
    const started = Date.now();
    const res = await h.command({
      text: 'Add a quickstart for the *Python* SDK &amp; <https://x.dev|CLI>',
      user_id: 'U0ALICE',
    });
    expect(res.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(1_000);

    const root = await waitFor('root message', () => h.slack.messages.find((m) => !m.thread_ts));
    expect(root.text).toContain('<@U0ALICE>');
    expect(root.text).toContain('Add a quickstart for the *Python* SDK');
    await waitFor('create call', () => h.agent.requestsFor('create')[0]);
    expect(h.agent.requestsFor('create')[0]?.body).toEqual({
      prompt: 'Add a quickstart for the *Python* SDK & CLI (https://x.dev)',
    });
    await waitFor('root shows working', () =>
      h.slack.messages.find((m) => m.ts === root.ts)?.text.includes('Working'),
    );

    h.agent.complete('job_1', 'https://github.com/example/docs/pull/7');
    const outcome = await waitFor('outcome post', () => h.slack.threadPosts(root.ts)[0]);
    expect(outcome.text).toContain('<@U0ALICE>');
    expect(outcome.text).toContain('https://github.com/example/docs/pull/7');
    expect(outcome.metadata?.event_type).toBe('docs_agent_post');
    await waitFor('root shows done', () =>
      h.slack.messages
        .find((m) => m.ts === root.ts)
        ?.text.includes('Done: <https://github.com/example/docs/pull/7'),
    );
    const job = await h.app.store.findJobByThread(root.channel, root.ts);
    expect(job).toMatchObject({
      agentJobId: 'job_1',
      phase: 'idle',
      prLink: 'https://github.com/example/docs/pull/7',
      runCount: 1,
    });
  });

  it('says so when the job completes without changing files', async () => {
    const { threadTs, jobId } = await h.startJob();
    h.agent.complete(jobId, null);
    const post = await waitFor('outcome', () => h.slack.threadPosts(threadTs)[0]);
    expect(post.text).toContain('without changing any files');
    expect(post.text).toContain('no pull request was opened');
  });

  it('posts an outcome Slack refuses the layout of as its plain text, never losing it', async () => {
    const { threadTs, jobId } = await h.startJob();
    // Slack's documented refusal of a message's blocks, on the outcome post only.
    h.slack.failIf('chat.postMessage', (args) => args.thread_ts === threadTs && args.blocks !== undefined, {
      error: 'invalid_blocks',
    });
    h.agent.complete(jobId, 'https://github.com/example/docs/pull/9');
    const post = await waitFor('outcome', () => h.slack.threadPosts(threadTs)[0]);
    expect(post.text).toContain('https://github.com/example/docs/pull/9');
    expect(post.blocks).toBeUndefined();
    expect(post.metadata?.event_payload).toMatchObject({ kind: 'outcome', run: 1 });
    await h.settled();
    expect(h.slack.threadPosts(threadTs)).toHaveLength(1);
  });

  it('reports a failed job with the job id to quote', async () => {
    const { threadTs, jobId } = await h.startJob();
    h.agent.setStatus(jobId, 'failed');
    const post = await waitFor('outcome', () => h.slack.threadPosts(threadTs)[0]);
    expect(post.text).toContain('failed');
    expect(post.text).toContain(jobId);
    await waitFor('root shows failed', () =>
      h.slack.messages.find((m) => m.ts === threadTs)?.text.includes(':x: Failed'),
    );
  });

  it('reports an archived job', async () => {
    const { threadTs, jobId } = await h.startJob();
    h.agent.setStatus(jobId, 'archived');
    const post = await waitFor('outcome', () => h.slack.threadPosts(threadTs)[0]);
    expect(post.text).toContain('archived');
  });

  it('posts each outcome once, even while the job stays terminal', async () => {
    const { threadTs, jobId } = await h.startJob();
    h.agent.complete(jobId, 'https://github.com/example/docs/pull/8');
    await waitFor('outcome', () => h.slack.threadPosts(threadTs)[0]);
    const gets = h.agent.requestsFor('get').length;
    await new Promise((r) => setTimeout(r, 400));
    expect(h.slack.threadPosts(threadTs)).toHaveLength(1);
    expect(h.agent.requestsFor('get').length).toBe(gets);
  });

  it('keeps watching a job whose status is unknown to the bot, and tolerates extra fields', async () => {
    const { threadTs, jobId } = await h.startJob();
    h.agent.setStatus(jobId, 'paused', { queuePosition: 3 });
    const gets = h.agent.requestsFor('get').length;
    await waitFor('more polls', () => h.agent.requestsFor('get').length > gets + 2);
    expect(h.slack.threadPosts(threadTs)).toHaveLength(0);
    h.agent.complete(jobId, null);
    await waitFor('outcome', () => h.slack.threadPosts(threadTs)[0]);
  });

  it('posts the outcome even while Slack keeps refusing root message updates', async () => {
    const { threadTs, jobId } = await h.startJob();
    h.slack.outage.begin('chat.update');
    h.agent.complete(jobId, 'https://github.com/example/docs/pull/11');
    const post = await waitFor('outcome', () => h.slack.threadPosts(threadTs)[0]);
    expect(post.text).toContain('pull/11');
    h.slack.outage.end('chat.update');
  });

  it('says the job is gone when the agent API answers 404', async () => {
    const { threadTs, jobId } = await h.startJob();
    h.agent.remove(jobId);
    const post = await waitFor('outcome', () => h.slack.threadPosts(threadTs)[0]);
    expect(post.text).toContain('no longer knows');
  });
});

describe('usage', () => {
  it.each(['', '   ', 'help', 'HELP'])('answers %j with private usage and starts nothing', async (text) => {
    const res = await h.command({ text });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { response_type: string; text: string };
    expect(body.response_type).toBe('ephemeral');
    expect(body.text).toContain('/docs-agent &lt;instruction&gt;');
    await new Promise((r) => setTimeout(r, 100));
    expect(h.agent.requestsFor('create')).toHaveLength(0);
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(0);
  });
});

describe('start-up', () => {
  it('warms the ack path with real commands, recording and posting nothing', async () => {
    const ready = h.logs.map((line) => JSON.parse(line)).find((l) => l.msg === 'docs-agent is ready');
    expect(ready.warmUp.requests).toBeGreaterThan(0);
    expect(await h.app.store.recentJobs({ requesterId: WARM_UP_USER }, 10)).toEqual([]);
    expect(await h.app.store.recentJobs({ channelId: WARM_UP_CHANNEL }, 10)).toEqual([]);
    expect(h.slack.messages).toEqual([]);
    expect(h.slack.calls.map((c) => c.method).filter((m) => m !== 'auth.test')).toEqual([]);
    expect(h.agent.requests).toEqual([]);
  });
});
