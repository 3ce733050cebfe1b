import { afterEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/types.js';
import type { AgentStandIn } from '../helpers/agent-stand-in.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import type { SlackStandIn } from '../helpers/slack-stand-in.js';

let h: Harness;
afterEach(async () => {
  await h.stop();
});

/** A job row as a previous process left it, with its root message already in Slack. */
async function seedJob(
  store: Store,
  slack: SlackStandIn,
  phase: 'accepted' | 'posting' | 'creating',
  responseUrl: string | null,
) {
  const now = Date.now();
  const { job, run } = await store.insertJob(
    {
      teamId: 'T0TEST',
      channelId: 'C0GENERAL',
      requesterId: 'U0ALICE',
      instruction: 'Document the CLI',
      triggerKey: `command:seed-${phase}`,
      responseUrl,
      pollIntervalMs: 40,
    },
    { kind: 'create', prompt: 'Document the CLI', authorId: 'U0ALICE', messageTs: null },
    now,
  );
  if (phase === 'posting') await store.apply({ jobId: job.id, job: { phase } }, now);
  if (phase === 'creating') {
    const ts = '1690000000.000001';
    slack.messages.push({ channel: 'C0GENERAL', ts, text: 'root', bot_id: 'B0BOT', user: 'U0BOT' });
    await store.apply(
      {
        jobId: job.id,
        job: { phase, threadTs: ts, cardTs: ts },
        run: { id: run.id, patch: { state: 'sending', sentAt: now } },
      },
      now,
    );
  }
  return job;
}

/**
 * A finished job with a reply a previous process recorded and never sent: `pending` (not yet
 * checked) or `ready` (checked, waiting for its batch).
 */
async function seedReply(
  store: Store,
  slack: SlackStandIn,
  agent: AgentStandIn,
  state: 'pending' | 'ready',
  teamId: string | null = null,
) {
  const now = Date.now();
  const ts = '1690000000.000009';
  slack.messages.push({ channel: 'C0GENERAL', ts, text: 'root', bot_id: 'B0BOT', user: 'U0BOT' });
  agent.jobs.set('job_seed', {
    id: 'job_seed',
    status: 'completed',
    source: { repository: 'https://github.com/example/docs', ref: null },
    model: 'sonnet',
    prLink: null,
    projectId: 'proj_test',
    createdAt: new Date(now).toISOString(),
    archivedAt: null,
    prompts: ['Document the CLI'],
  });
  const { job, run } = await store.insertJob(
    {
      teamId: 'T0TEST',
      channelId: 'C0GENERAL',
      requesterId: 'U0ALICE',
      instruction: 'Document the CLI',
      triggerKey: 'command:seed-reply',
      responseUrl: null,
      pollIntervalMs: 40,
      owner: 'i-stopped',
    },
    { kind: 'create', prompt: 'Document the CLI', authorId: 'U0ALICE', messageTs: null },
    now - 60_000,
  );
  await store.apply(
    {
      jobId: job.id,
      job: {
        phase: 'idle',
        threadTs: ts,
        cardTs: ts,
        agentJobId: 'job_seed',
        lastOutcome: 'completed_no_changes',
      },
      run: { id: run.id, patch: { state: 'sent', sentAt: now - 60_000, outcome: 'completed_no_changes' } },
      incrementRunCount: true,
    },
    now - 60_000,
  );
  const { run: reply } = await store.insertFollowUp(
    job.id,
    {
      kind: 'follow_up',
      prompt: 'Add the install step',
      authorId: 'U0BOB',
      messageTs: '1690000001.000001',
      owner: 'i-stopped',
      teamId,
    },
    now - 5_000,
  );
  if (state === 'ready')
    await store.apply({ jobId: job.id, run: { id: reply.id, patch: { state } } }, now - 5_000);
}

describe('restarts', () => {
  it('sends a follow-up that was checked and waiting for its batch when the process stopped', async () => {
    h = await startHarness({}, { seed: (store, slack, agent) => seedReply(store, slack, agent, 'ready') });
    await waitFor('follow-up sent after the restart', () => h.agent.requestsFor('message').length === 1);
    expect(h.agent.requestsFor('message')[0]).toMatchObject({
      jobId: 'job_seed',
      body: { prompt: 'Add the install step' },
    });
    await h.settled();
    expect(h.agent.requestsFor('message')).toHaveLength(1);
  });

  it('checks a reply recorded before the restart against its author’s workspace', async () => {
    h = await startHarness(
      {},
      { seed: (store, slack, agent) => seedReply(store, slack, agent, 'pending', 'T0OTHER') },
    );
    const note = await waitFor('refusal', () => h.slack.callsTo('chat.postEphemeral')[0]);
    expect(note.args).toMatchObject({ user: 'U0BOB' });
    expect(String(note.args.text)).toContain('serves another Slack workspace');
    await h.settled();
    expect(h.agent.requestsFor('message')).toHaveLength(0);
  });

  it('resumes watching active jobs after a restart and posts the outcome once', async () => {
    h = await startHarness();
    const { threadTs, jobId } = await h.startJob();
    await h.restart();
    h.agent.complete(jobId, 'https://github.com/example/docs/pull/3');
    await waitFor('outcome after restart', () => h.slack.threadPosts(threadTs)[0]);
    await h.restart();
    await h.settled();
    expect(h.slack.threadPosts(threadTs)).toHaveLength(1);
  });

  it('delivers an outcome that Slack refused before the restart, exactly once', async () => {
    h = await startHarness();
    const { threadTs, jobId } = await h.startJob();
    h.slack.outage.begin('chat.postMessage');
    h.agent.complete(jobId, null);
    await waitFor('a failed delivery attempt', () => h.logs.some((l) => l.includes('Slack delivery failed')));
    expect(h.slack.threadPosts(threadTs)).toHaveLength(0);
    await h.restart();
    h.slack.outage.end('chat.postMessage');
    await waitFor('outcome delivered after restart', () => h.slack.threadPosts(threadTs)[0], 8_000);
    await h.settled();
    expect(h.slack.threadPosts(threadTs)).toHaveLength(1);
  });

  it('explains a job interrupted while being created, without creating it again', async () => {
    h = await startHarness(
      {},
      { seed: async (store, slack) => void (await seedJob(store, slack, 'creating', null)) },
    );
    const post = await waitFor('explanation', () => h.slack.threadPosts('1690000000.000001')[0]);
    expect(post.text).toContain('<@U0ALICE>');
    expect(post.text).toContain('cannot tell whether the docs agent received it');
    await h.settled();
    expect(h.agent.requestsFor('create')).toHaveLength(0);
    expect((await h.app.store.findJobByThread('C0GENERAL', '1690000000.000001'))?.phase).toBe(
      'start_unknown',
    );
  });

  it('carries on with a command that was recorded but not yet worked on', async () => {
    h = await startHarness(
      {},
      { seed: async (store, slack) => void (await seedJob(store, slack, 'accepted', null)) },
    );
    await waitFor('job created', () => h.agent.requestsFor('create').length === 1);
    expect(h.agent.requestsFor('create')[0]?.body).toEqual({ prompt: 'Document the CLI' });
    const root = await waitFor('root', () => h.slack.messages.find((m) => !m.thread_ts));
    expect(root.text).toContain('Document the CLI');
  });

  it('after a restart while the root was being posted, finds the root in Slack and carries on in it', async () => {
    h = await startHarness(
      {},
      {
        seed: async (store, slack) => {
          const job = await seedJob(store, slack, 'posting', slack.responseUrl('seeded'));
          slack.messages.push({
            channel: 'C0GENERAL',
            ts: String(Date.now() / 1000 + 1),
            text: 'root',
            bot_id: 'B0BOT',
            user: 'U0BOT',
            metadata: { event_type: 'docs_agent_root', event_payload: { key: `root:${job.id}` } },
          });
        },
      },
    );
    await waitFor('job created', () => h.agent.requestsFor('create').length === 1);
    expect(h.slack.messages.filter((m) => !m.thread_ts)).toHaveLength(1);
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(0);
    expect(h.slack.responses).toHaveLength(0);
  });

  it('after a restart while the root was being posted, starts over when Slack has no root', async () => {
    h = await startHarness(
      {},
      { seed: async (store, slack) => void (await seedJob(store, slack, 'posting', null)) },
    );
    await waitFor('job created', () => h.agent.requestsFor('create').length === 1);
    expect(h.slack.messages.filter((m) => !m.thread_ts)).toHaveLength(1);
  });

  it('tells the requester privately when Slack cannot say whether the root was posted', async () => {
    h = await startHarness(
      {},
      {
        seed: async (store, slack) => {
          slack.outage.begin('conversations.history');
          await seedJob(store, slack, 'posting', slack.responseUrl('seeded'));
        },
      },
    );
    const reply = await waitFor('private reply', () => h.slack.responses[0]);
    expect(reply.path).toBe('/respond/seeded');
    expect(String(reply.body.text)).toContain('nothing was started');
    expect(h.agent.requestsFor('create')).toHaveLength(0);
  });

  it('does not post again a message Slack accepted just before a crash', async () => {
    const threadTs = '1690000000.000001';
    h = await startHarness(
      {},
      {
        seed: async (store, slack) => {
          const job = await seedJob(store, slack, 'creating', null);
          await store.apply({ jobId: job.id, job: { phase: 'idle', agentJobId: 'job_x' } }, Date.now());
          await store.enqueue(
            [
              {
                jobId: job.id,
                dedupeKey: 'outcome:1:1',
                payload: {
                  type: 'post',
                  channel: 'C0GENERAL',
                  threadTs,
                  text: 'outcome',
                  eventType: 'docs_agent_post',
                },
              },
            ],
            Date.now(),
          );
          const [item] = await store.dueOutbox(Date.now(), 10);
          if (!item) throw new Error('seed failed');
          // The attempt started and Slack has the message, but the process died before marking it.
          await store.updateOutbox(item.id, { attempts: 1, startedAt: Date.now() });
          slack.messages.push({
            channel: 'C0GENERAL',
            ts: '1690000000.000002',
            thread_ts: threadTs,
            text: 'outcome',
            bot_id: 'B0BOT',
            user: 'U0BOT',
            metadata: { event_type: 'docs_agent_post', event_payload: { key: 'outcome:1:1' } },
          });
        },
      },
    );
    await waitFor('Slack asked what it holds', () => h.slack.callsTo('conversations.replies')[0]);
    await h.settled();
    expect(h.slack.threadPosts(threadTs)).toHaveLength(1);
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(0);
  });
});
