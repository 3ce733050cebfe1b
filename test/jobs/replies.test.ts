import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentNotFoundError } from '../../src/agent/errors.js';
import type { Replies } from '../../src/jobs/replies.js';
import type { FollowUpRequest, ReplyRequest } from '../../src/jobs/requests.js';
import { SlackCallError } from '../../src/slack/slack-errors.js';
import type { JobPhase } from '../../src/store/types.js';
import { guest, TEAM } from '../helpers/fake-network.js';
import { CHANNEL, createJobWorld, INSTANCE, type JobWorld, T0 } from '../helpers/job-world.js';

let w: JobWorld;
let replies: Replies;
let stop: () => void;
function build(env: Record<string, string> = {}) {
  w = createJobWorld(env);
  const parts = w.parts();
  replies = parts.replies;
  stop = () => {
    parts.verification.stop();
    parts.followUps.stop();
  };
}
beforeEach(() => build());
afterEach(async () => {
  stop();
  await w.store.close();
});

const HELPER = 'U0HELPER';
const THREAD = '1700000000.000001';
const reply = (fields: Partial<ReplyRequest> = {}): Promise<number | undefined> =>
  replies.acceptReply({
    teamId: TEAM,
    channelId: CHANNEL,
    threadTs: THREAD,
    messageTs: '1700000500.000500',
    userId: HELPER,
    text: 'Also cover the <https://example.com/sdk|SDK>',
    ...fields,
  });

/** A follow-up to `jobId` submitted in a modal: no message carries it. */
const fromModal = (jobId: number, fields: Partial<FollowUpRequest> = {}): Promise<number | undefined> =>
  replies.acceptFollowUp({
    jobId,
    source: { kind: 'modal', viewId: 'V0FIX' },
    teamId: TEAM,
    userId: HELPER,
    text: 'Fix the &lt;table&gt;',
    ...fields,
  });

/** The job in its thread, moved to `phase`. */
async function jobIn(phase: JobPhase) {
  const { job } = await w.activeJob();
  if (phase !== 'active') await w.store.apply({ jobId: job.id, job: { phase } }, T0);
  return w.job(job.id);
}

describe('acceptReply', () => {
  it('records a pending follow-up owned by this instance, in plain text', async () => {
    const job = await jobIn('active');
    const runId = await reply();
    expect(runId).toBeTypeOf('number');
    expect(await w.store.getRun(runId ?? -1)).toMatchObject({
      jobId: job.id,
      kind: 'follow_up',
      seq: 2,
      state: 'pending',
      authorId: HELPER,
      teamId: TEAM,
      owner: INSTANCE,
      messageTs: '1700000500.000500',
      prompt: 'Also cover the SDK (https://example.com/sdk)',
    });
    expect(w.outbox()).toEqual([]);
  });

  it('records nothing for a thread with no job, or for the same message again', async () => {
    expect(await reply()).toBeUndefined();
    const job = await jobIn('active');
    expect(await reply()).toBeTypeOf('number');
    expect(await reply({ text: 'edited?' })).toBeUndefined();
    expect((await w.runs(job.id)).map((r) => r.kind)).toEqual(['create', 'follow_up']);
  });

  it('leaves a reply that mentions the bot in a thread whose job never ran to start a new job', async () => {
    const job = await jobIn('not_started');
    expect(await reply({ mentionsBot: true })).toBeUndefined();
    expect(await w.runs(job.id)).toHaveLength(1);
  });
});

describe('acceptFollowUp', () => {
  it('records a follow-up from a modal under the key of its view, with no message, once', async () => {
    const job = await jobIn('active');
    const runId = await fromModal(job.id);
    expect(await w.store.getRun(runId ?? -1)).toMatchObject({
      jobId: job.id,
      kind: 'follow_up',
      seq: 2,
      state: 'pending',
      authorId: HELPER,
      teamId: TEAM,
      owner: INSTANCE,
      runKey: 'modal:V0FIX',
      messageTs: null,
      prompt: 'Fix the <table>',
    });
    // The same submission delivered again is a repeat; another view is a follow-up of its own.
    expect(await fromModal(job.id, { text: 'Submitted again' })).toBeUndefined();
    expect(await fromModal(job.id, { source: { kind: 'modal', viewId: 'V0MORE' } })).toBeTypeOf('number');
    expect((await w.runs(job.id)).map((r) => r.runKey)).toEqual(['first', 'modal:V0FIX', 'modal:V0MORE']);
    expect(w.logs.some((l) => l.includes('repeated follow-up ignored') && l.includes('modal:V0FIX'))).toBe(
      true,
    );
    expect(w.outbox()).toEqual([]);
  });

  it('records nothing for a job that does not exist', async () => {
    expect(await fromModal(404)).toBeUndefined();
  });

  it('is batched with the replies in the thread and sent with them, and only the replies get :eyes:', async () => {
    const job = await jobIn('creating');
    const replyId = (await reply()) ?? -1;
    const modalId = (await fromModal(job.id)) ?? -1;
    await replies.processReply(replyId);
    await replies.processReply(modalId);
    expect(w.agent.sendMessage).not.toHaveBeenCalled();
    // The create call answered: both go, as one follow-up, in the order they came.
    await w.store.apply({ jobId: job.id, job: { phase: 'active' } }, T0);
    await replies.processReply(modalId);
    expect(w.agent.sendMessage).toHaveBeenCalledOnce();
    expect(w.agent.sendMessage).toHaveBeenCalledWith(
      'job_test_1',
      'Also cover the SDK (https://example.com/sdk)\n\nFix the <table>',
    );
    expect(await w.store.getRun(modalId)).toMatchObject({ state: 'sent', sentAt: T0 });
    // One call to the agent for both: the job's run count moves on once.
    expect(await w.job(job.id)).toMatchObject({ runCount: 2 });
    // No message carried the modal's follow-up: there is nothing to react to.
    expect(w.outbox().filter((r) => r.payload.type === 'reaction')).toEqual([
      {
        jobId: job.id,
        key: `received:${replyId}`,
        payload: { type: 'reaction', channel: CHANNEL, ts: '1700000500.000500', name: 'eyes' },
      },
    ]);
  });

  it('names no message as its source in the metadata of a post about it', async () => {
    w.agent.sendMessage.mockRejectedValueOnce(new AgentNotFoundError('no such job'));
    const job = await jobIn('active');
    const runId = (await fromModal(job.id)) ?? -1;
    await replies.processReply(runId);
    expect(await w.store.getRun(runId)).toMatchObject({ state: 'failed' });
    const post = w.outbox().find((r) => r.key === `followup-error:${runId}:${job.id}`);
    expect(post?.payload).toMatchObject({ type: 'post', about: { kind: 'notice', run: 2, source: null } });
  });
});

describe('processReply', () => {
  it('checks the reply and sends it, marking it received', async () => {
    const job = await jobIn('active');
    const runId = (await reply()) ?? -1;
    await replies.processReply(runId);

    expect(w.agent.sendMessage).toHaveBeenCalledWith(
      'job_test_1',
      'Also cover the SDK (https://example.com/sdk)',
    );
    expect(await w.store.getRun(runId)).toMatchObject({ state: 'sent', sentAt: T0 });
    expect(await w.job(job.id)).toMatchObject({ phase: 'active', runCount: 2 });
    const reaction = w.outbox().find((r) => r.key === `received:${runId}`);
    expect(reaction?.payload).toEqual({
      type: 'reaction',
      channel: CHANNEL,
      ts: '1700000500.000500',
      name: 'eyes',
    });
    expect(w.deps.loops.poller.kick).toHaveBeenCalledOnce();
  });

  it('sends a reply once, however often it is processed', async () => {
    await jobIn('active');
    const runId = (await reply()) ?? -1;
    await Promise.all([replies.processReply(runId), replies.processReply(runId)]);
    await replies.processReply(runId);
    expect(w.agent.sendMessage).toHaveBeenCalledOnce();
  });

  it('refuses a reply with no text, privately', async () => {
    await jobIn('active');
    const runId = (await reply({ text: '   ' })) ?? -1;
    await replies.processReply(runId);
    expect(w.agent.sendMessage).not.toHaveBeenCalled();
    expect(await w.store.getRun(runId)).toMatchObject({ state: 'failed', error: 'empty' });
    const [note, ...more] = w.outbox();
    expect(more).toEqual([]);
    expect(note?.key).toBe(`dropped:${runId}`);
    expect(note?.payload).toMatchObject({ type: 'ephemeral', user: HELPER, threadTs: THREAD });
    expect(JSON.stringify(note?.payload)).toContain('has no text');
  });

  it('refuses a reply over MAX_PROMPT_CHARS, saying how long it is', async () => {
    build({ MAX_PROMPT_CHARS: '100' });
    await jobIn('active');
    const runId = (await reply({ text: 'y'.repeat(150) })) ?? -1;
    await replies.processReply(runId);
    expect(w.agent.sendMessage).not.toHaveBeenCalled();
    expect(await w.store.getRun(runId)).toMatchObject({ state: 'failed', error: 'refused' });
    expect(JSON.stringify(w.outbox()[0]?.payload)).toContain('150 characters');
  });

  it('refuses a guest’s reply', async () => {
    w.slack.userInfo.mockResolvedValueOnce(guest());
    await jobIn('active');
    const runId = (await reply()) ?? -1;
    await replies.processReply(runId);
    expect(w.agent.sendMessage).not.toHaveBeenCalled();
    expect(w.outboxKeys()).toEqual([`dropped:${runId}`]);
  });

  it('holds a reply whose author Slack cannot confirm, and tells them once', async () => {
    w.slack.userInfo.mockRejectedValue(new SlackCallError('users.info', 'request_timeout'));
    await jobIn('active');
    const runId = (await reply()) ?? -1;
    await replies.processReply(runId);
    expect(w.agent.sendMessage).not.toHaveBeenCalled();
    expect((await w.store.getRun(runId))?.state).toBe('pending');
    expect(w.outboxKeys()).toEqual([`held:reply:${runId}`]);
  });

  it.each([
    ['never started', 'not_started', 'it was never started'],
    ['has an unknown start', 'start_unknown', 'it is not known whether it started'],
    ['was forgotten by the agent', 'gone', 'no longer knows this job'],
  ] as const)('refuses a follow-up to a job that %s, with the reason', async (_what, phase, reason) => {
    await jobIn(phase);
    const runId = (await reply()) ?? -1;
    await replies.processReply(runId);
    expect(w.agent.sendMessage).not.toHaveBeenCalled();
    expect(await w.store.getRun(runId)).toMatchObject({ state: 'failed', error: `job is ${phase}` });
    const [note, ...more] = w.outbox();
    expect(more).toEqual([]);
    expect(note?.key).toBe(`dropped:${runId}`);
    expect(JSON.stringify(note?.payload)).toContain(reason);
  });

  it('keeps a reply to a job still being created until it exists', async () => {
    const job = await jobIn('creating');
    const runId = (await reply()) ?? -1;
    await replies.processReply(runId);
    expect(w.agent.sendMessage).not.toHaveBeenCalled();
    expect((await w.store.getRun(runId))?.state).toBe('ready');
    expect(w.outbox()).toEqual([]);
    // The create call answered: the waiting reply goes now.
    await w.store.apply({ jobId: job.id, job: { phase: 'active' } }, T0);
    await replies.processReply(runId);
    expect(w.agent.sendMessage).toHaveBeenCalledOnce();
  });
});
