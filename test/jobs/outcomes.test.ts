import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRunOutcomes, type RunOutcomes } from '../../src/jobs/outcomes.js';
import type { JobRecord } from '../../src/store/types.js';
import { agentJob } from '../helpers/fake-network.js';
import { CHANNEL, createJobWorld, INSTANCE, type JobWorld, REQUESTER, T0 } from '../helpers/job-world.js';

/** What the features put below every outcome: here, a block naming the outcome it was asked for. */
const belowOutcome = (jobId: number, runSeq: number) => [
  { type: 'divider', block_id: `below:${jobId}:${runSeq}` },
];

let w: JobWorld;
let outcomes: RunOutcomes;
beforeEach(() => {
  w = createJobWorld();
  outcomes = createRunOutcomes({ ...w.ctx, belowOutcome });
});
afterEach(() => w.store.close());

const PR = 'https://github.com/example/docs/pull/9';
const posts = () => w.outbox().filter((r) => r.payload.type === 'post');

/** A follow-up from `author` the agent accepted while it was still working on the job. */
async function sentFollowUp(job: JobRecord, author: string, messageTs: string) {
  const { run } = await w.store.insertFollowUp(
    job.id,
    { kind: 'follow_up', prompt: 'Also the SDK', authorId: author, messageTs, owner: INSTANCE },
    T0,
  );
  await w.store.apply(
    { jobId: job.id, run: { id: run.id, patch: { state: 'sent', sentAt: T0 } }, incrementRunCount: true },
    T0,
  );
  return w.job(job.id);
}

describe('finishRun', () => {
  it('ends the poll claim on the job in the same write: the poller needs no second one', async () => {
    const { job } = await w.activeJob();
    const [claimed] = await w.store.claimDueJobs(INSTANCE, job.nextPollAt ?? T0, 10, 60_000);
    expect(claimed).toMatchObject({ id: job.id, claimedBy: INSTANCE });
    expect(await outcomes.finishRun(claimed ?? job, 'completed_no_changes')).toBe(true);
    expect(await w.job(job.id)).toMatchObject({ phase: 'idle', claimedBy: null, claimedUntil: null });
  });

  it('records the outcome and queues exactly one outcome post and a card update', async () => {
    const { job } = await w.activeJob();
    w.advance(5_000);
    const finished = await outcomes.finishRun(
      job,
      'completed_pr',
      agentJob({ status: 'completed', prLink: PR }),
    );

    expect(finished).toBe(true);
    expect(await w.job(job.id)).toMatchObject({
      phase: 'idle',
      lastOutcome: 'completed_pr',
      prLink: PR,
      agentStatus: 'completed',
      nextPollAt: null,
    });
    expect((await w.runs(job.id))[0]).toMatchObject({ outcome: 'completed_pr', outcomeAt: T0 + 5_000 });
    const [post, ...more] = posts();
    expect(more).toEqual([]);
    expect(post?.key).toBe(`outcome:1:${job.id}`);
    expect(post?.payload).toMatchObject({
      type: 'post',
      channel: CHANNEL,
      threadTs: job.threadTs,
      about: { kind: 'outcome', run: 1 },
    });
    expect(JSON.stringify(post?.payload)).toContain('pull/9');
    expect(JSON.stringify(post?.payload)).toContain(`<@${REQUESTER}>`);
    expect(w.outbox().filter((r) => r.payload.type === 'update_root')).toHaveLength(1);
    expect(w.deps.loops.outbox.kick).toHaveBeenCalled();
  });

  it('answers a follow-up sent meanwhile in the same post, naming both authors', async () => {
    const { job } = await w.activeJob();
    const updated = await sentFollowUp(job, 'U0HELPER', '1700000500.000500');
    await outcomes.finishRun(updated, 'completed_no_changes', agentJob({ status: 'completed' }));

    const [post, ...more] = posts();
    expect(more).toEqual([]);
    expect(post?.key).toBe(`outcome:2:${job.id}`);
    expect(post?.payload).toMatchObject({ about: { run: 2, covers: '1,2', sources: ',1700000500.000500' } });
    const text = JSON.stringify(post?.payload);
    expect(text).toContain(`<@${REQUESTER}>`);
    expect(text).toContain('<@U0HELPER>');
    // Below the outcome, what the features put there for the run the post answers (the latest).
    expect(post?.payload).toMatchObject({
      blocks: [{ type: 'section' }, { type: 'divider', block_id: `below:${job.id}:2` }],
    });
    expect((await w.runs(job.id)).map((r) => r.outcome)).toEqual([
      'completed_no_changes',
      'completed_no_changes',
    ]);
  });

  it('ignores an answer observed before the job moved on, and writes nothing', async () => {
    const { job } = await w.activeJob();
    // A follow-up started a new run after the poll read the job.
    await sentFollowUp(job, 'U0HELPER', '1700000500.000500');
    const stale = job;
    expect(await outcomes.finishRun(stale, 'failed', agentJob({ status: 'failed' }))).toBe(false);
    expect(w.outbox()).toEqual([]);
    expect((await w.job(job.id)).phase).toBe('active');
    expect((await w.runs(job.id)).map((r) => r.outcome)).toEqual([null, null]);
  });

  it('finishes a run once: the same observation twice posts once', async () => {
    const { job } = await w.activeJob();
    expect(await outcomes.finishRun(job, 'failed')).toBe(true);
    expect(await outcomes.finishRun(job, 'failed')).toBe(false);
    expect(posts()).toHaveLength(1);
  });

  it('a job the agent forgot is gone, and its thread is told so', async () => {
    const { job } = await w.activeJob();
    await outcomes.finishRun(job, 'gone');
    expect(await w.job(job.id)).toMatchObject({ phase: 'gone', lastOutcome: 'gone', nextPollAt: null });
    expect(posts().map((p) => p.key)).toEqual([`outcome:1:${job.id}`]);
  });

  it('stops watching a job that runs too long, saying so in the thread', async () => {
    const { job } = await w.activeJob();
    await outcomes.finishRun(job, 'stopped_watching');
    expect((await w.job(job.id)).phase).toBe('idle');
    expect(JSON.stringify(posts()[0]?.payload)).toContain('stopped watching');
  });
});

describe('notePollRefused', () => {
  it('tells the thread once per run that the agent API refuses the key', async () => {
    const { job } = await w.activeJob();
    await outcomes.notePollRefused(job);
    await outcomes.notePollRefused(job);
    const [notice, ...more] = posts();
    expect(more).toEqual([]);
    expect(notice?.key).toBe(`poll-refused:1:${job.id}`);
    expect(notice?.payload).toMatchObject({ about: { kind: 'notice' } });
    expect(JSON.stringify(notice?.payload)).toContain("refuses this bot's API key");
    // The job itself is left as it was: polling goes on.
    expect((await w.job(job.id)).phase).toBe('active');
  });
});

describe('finishRun with notifications (NOTIFY_*)', () => {
  const notifying = (on: 'pr' | 'all') =>
    createRunOutcomes({
      ...w.ctx,
      belowOutcome,
      notify: {
        channelFor: (projectId) => (projectId === null || projectId === 'proj_test' ? 'C0NEWS' : undefined),
        on,
        requester: 'dm',
        privateJobs: 'outcome-only',
        workspaceUrl: async () => 'https://acme.slack.com/',
      },
    });
  const kinds = () => w.outbox().map((r) => [r.payload.type, r.key]);

  it('queues the notification and the requester’s DM with the outcome post, in its write', async () => {
    const { job } = await w.activeJob({ privacy: 'public' });
    await notifying('pr').finishRun(job, 'completed_pr', agentJob({ status: 'completed', prLink: PR }));
    expect(kinds()).toEqual([
      ['post', `outcome:1:${job.id}`],
      ['notify', `notify:1:${job.id}`],
      ['direct', `requester-dm:1:${job.id}`],
      ['update_root', null],
    ]);
    const [, notice, dm] = w.outbox();
    expect(notice?.payload).toMatchObject({ channel: 'C0NEWS', eventType: 'docs_agent_notification' });
    expect(JSON.stringify(notice?.payload)).toContain(`<${PR}|Review the pull request>`);
    expect(JSON.stringify(notice?.payload)).toContain('https://acme.slack.com/archives/');
    expect(dm?.payload).toMatchObject({ user: REQUESTER, fields: { run: 1, outcome: 'completed_pr' } });
  });

  it('announces only pull requests unless NOTIFY_ON=all; the DM tells every outcome', async () => {
    const first = await w.activeJob();
    await notifying('pr').finishRun(first.job, 'failed', agentJob({ status: 'failed' }));
    expect(kinds().map(([type]) => type)).toEqual(['post', 'direct', 'update_root']);
    const second = await w.activeJob({ channelId: 'C0OTHER' });
    await notifying('all').finishRun(second.job, 'failed', agentJob({ status: 'failed' }));
    expect(kinds().filter(([type]) => type === 'notify')).toEqual([['notify', `notify:1:${second.job.id}`]]);
  });

  it('queues nothing when the answer is stale: no notification without its outcome', async () => {
    const { job } = await w.activeJob();
    await sentFollowUp(job, 'U0HELPER', '1700000500.000500');
    expect(await notifying('all').finishRun(job, 'failed', agentJob({ status: 'failed' }))).toBe(false);
    expect(w.outbox()).toEqual([]);
  });

  it('asks again before a public job is told elsewhere: a channel made private since keeps its words', async () => {
    const { job } = await w.activeJob({ privacy: 'public', instruction: 'Document the Falcon tier' });
    w.slack.conversationFacts.mockResolvedValueOnce({
      isMember: true,
      isArchived: false,
      isDirect: false,
      isPrivate: true,
    });
    await notifying('pr').finishRun(job, 'completed_pr', agentJob({ status: 'completed', prLink: PR }));
    const notice = w.outbox().find((r) => r.payload.type === 'notify');
    expect(JSON.stringify(notice?.payload)).toContain(`<${PR}|Review the pull request>`);
    expect(JSON.stringify(notice?.payload)).not.toContain('Falcon');
    expect(JSON.stringify(notice?.payload)).not.toContain('/archives/');
    expect(await w.job(job.id)).toMatchObject({ phase: 'idle', privacy: 'private' });
  });
});
