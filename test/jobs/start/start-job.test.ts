import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AgentBadRequestError, AgentOutcomeUnknownError } from '../../../src/agent/errors.js';
import { type InstructionChecks, STEP_VERIFICATION_LIMIT_MS } from '../../../src/jobs/instruction-checks.js';
import type { JobService } from '../../../src/jobs/job-service.js';
import { createJobStart } from '../../../src/jobs/start/start-job.js';
import { SlackCallError } from '../../../src/slack/caller.js';
import { CHANNEL, createJobWorld, type JobWorld, REQUESTER, T0 } from '../../helpers/job-world.js';
import { BOT_USER_ID } from '../../helpers/slack-stand-in.js';

let w: JobWorld;
let start: JobService;
function build(env: Record<string, string> = {}) {
  w = createJobWorld(env);
  start = w.service();
}
beforeEach(() => build());
afterEach(async () => {
  start.stop();
  await w.store.close();
});

const RESPONSE_URL = 'https://hooks.slack.com/commands/T0TEST/1/test';

describe('startJob', () => {
  it('posts the status card, creates the job upstream and records it active', async () => {
    w.slack.postMessage.mockResolvedValueOnce('1700000300.000300');
    const { job } = await w.insertJob({}, 'Document the rate limits');
    await start.startJob(job.id);

    expect(w.slack.postMessage).toHaveBeenCalledOnce();
    expect(w.slack.postMessage.mock.calls[0]?.[0]).toMatchObject({
      channel: CHANNEL,
      metadata: { key: `root:${job.id}` },
    });
    // A command's card is the thread's root: it is posted outside any thread.
    expect(w.slack.postMessage.mock.calls[0]?.[0]).not.toHaveProperty('threadTs');
    expect(w.agent.createJob).toHaveBeenCalledWith('Document the rate limits');
    expect(await w.job(job.id)).toMatchObject({
      phase: 'active',
      threadTs: '1700000300.000300',
      cardTs: '1700000300.000300',
      agentJobId: 'job_test_1',
      runCount: 1,
      runStartedAt: T0,
      nextPollAt: T0 + w.config.poll.intervalMs,
      lastError: null,
    });
    expect((await w.runs(job.id))[0]).toMatchObject({ state: 'sent', sentAt: T0 });
    // The card is re-rendered with the agent's answer; nothing else is said.
    expect(w.outbox().map((r) => r.payload.type)).toEqual(['update_root']);
    expect(w.deps.loops.poller.kick).toHaveBeenCalledOnce();
  });

  it('reads a command’s job and run once as it starts: no edit can reach a command’s instruction', async () => {
    const { job } = await w.insertJob({}, 'Document the webhooks');
    const getJob = vi.spyOn(w.store, 'getJob');
    const getRun = vi.spyOn(w.store, 'getRun');
    await start.startJob(job.id);
    expect(getJob).toHaveBeenCalledOnce();
    expect(getRun).not.toHaveBeenCalled();
    expect(w.agent.createJob).toHaveBeenCalledWith('Document the webhooks');
    expect(await w.job(job.id)).toMatchObject({ phase: 'active' });
  });

  it('starts a job only once, however many callers get there', async () => {
    const { job } = await w.insertJob();
    await Promise.all([start.startJob(job.id), start.startJob(job.id)]);
    await start.startJob(job.id);
    expect(w.slack.postMessage).toHaveBeenCalledOnce();
    expect(w.agent.createJob).toHaveBeenCalledOnce();
  });

  it('refuses an instruction over MAX_PROMPT_CHARS privately, and sends nothing', async () => {
    build({ MAX_PROMPT_CHARS: '100' });
    const { job } = await w.insertJob({ responseUrl: RESPONSE_URL }, 'x'.repeat(101));
    await start.startJob(job.id);

    expect(w.slack.postMessage).not.toHaveBeenCalled();
    expect(w.agent.createJob).not.toHaveBeenCalled();
    expect(await w.job(job.id)).toMatchObject({ phase: 'not_started', lastError: 'refused' });
    expect((await w.runs(job.id))[0]).toMatchObject({ state: 'failed', error: 'refused' });
    const [note, ...rest] = w.outbox();
    expect(rest).toEqual([]);
    expect(note?.key).toBe(`refused:${job.id}`);
    expect(note?.payload).toMatchObject({ type: 'respond', responseUrl: RESPONSE_URL });
    expect(JSON.stringify(note?.payload)).toContain('101 characters');
  });

  it('holds an instruction whose author Slack cannot confirm, and tells them once', async () => {
    w.slack.userInfo.mockRejectedValue(new SlackCallError('users.info', 'request_timeout'));
    const { job } = await w.insertJob();
    await start.startJob(job.id);

    expect(w.agent.createJob).not.toHaveBeenCalled();
    expect((await w.job(job.id)).phase).toBe('accepted');
    expect(w.outboxKeys()).toEqual([`held:job:${job.id}`]);
  });

  it('gives a workflow step’s job up sooner than a typed one: its step must be answered before Slack ends it', async () => {
    w.slack.userInfo.mockRejectedValue(new SlackCallError('users.info', 'request_timeout'));
    const { job: typed } = await w.insertJob();
    const { job: stepped } = await w.insertJob({ origin: 'workflow', triggerKey: 'step:Fx0HELD' });
    w.advance(STEP_VERIFICATION_LIMIT_MS + 1);
    await start.startJob(typed.id);
    await start.startJob(stepped.id);
    expect(w.agent.createJob).not.toHaveBeenCalled();
    expect((await w.job(typed.id)).phase).toBe('accepted');
    expect((await w.job(stepped.id)).phase).toBe('not_started');
  });

  it('explains privately when the bot is not in the channel, and creates nothing', async () => {
    w.slack.postMessage.mockRejectedValueOnce(
      new SlackCallError('chat.postMessage', 'not_in_channel', { platform: true }),
    );
    const { job } = await w.insertJob();
    await start.startJob(job.id);

    expect(w.agent.createJob).not.toHaveBeenCalled();
    expect(await w.job(job.id)).toMatchObject({
      phase: 'not_started',
      lastError: 'root post failed: not_in_channel',
    });
    const [note, ...rest] = w.outbox();
    expect(rest).toEqual([]);
    expect(note?.key).toBe(`start-refused:${job.id}`);
    expect(note?.payload).toMatchObject({ type: 'ephemeral', channel: CHANNEL, user: REQUESTER });
    expect(JSON.stringify(note?.payload)).toContain('/invite @docs-agent');
  });

  it('carries on from the card Slack holds when the post’s answer was lost', async () => {
    w.slack.postMessage.mockRejectedValueOnce(new SlackCallError('chat.postMessage', 'request_timeout'));
    w.slack.findInChannel.mockResolvedValueOnce('1700000400.000400');
    const { job } = await w.insertJob();
    await start.startJob(job.id);

    expect(w.slack.postMessage).toHaveBeenCalledOnce();
    expect(w.agent.createJob).toHaveBeenCalledOnce();
    expect(await w.job(job.id)).toMatchObject({ phase: 'active', cardTs: '1700000400.000400' });
  });

  it.each([
    ['may have reached the agent', new AgentOutcomeUnknownError('timed out'), 'start_unknown', 'unknown'],
    ['was refused by the agent', new AgentBadRequestError('bad prompt'), 'not_started', 'failed'],
  ] as const)('a create call that %s is told in the thread', async (_what, error, phase, runState) => {
    w.agent.createJob.mockRejectedValueOnce(error);
    const { job } = await w.insertJob();
    await start.startJob(job.id);

    expect((await w.job(job.id)).phase).toBe(phase);
    expect((await w.runs(job.id))[0]?.state).toBe(runState);
    const post = w.outbox().find((r) => r.key === `start-error:${job.id}`);
    expect(post?.payload).toMatchObject({
      type: 'post',
      channel: CHANNEL,
      about: { kind: 'notice', run: 1 },
    });
    expect(JSON.stringify(post?.payload)).toContain(`<@${REQUESTER}>`);
    expect(w.deps.loops.poller.kick).not.toHaveBeenCalled();
  });

  it('a mention’s job takes the replies posted in its thread before it was recorded', async () => {
    const threadTs = '1700000100.000100';
    const { job } = await w.insertJob({
      origin: 'mention',
      threadTs,
      triggerKey: `mention:${CHANNEL}:${threadTs}`,
    });
    await w.store.db.prepare('UPDATE runs SET message_ts = ? WHERE job_id = ?').run(threadTs, job.id);
    w.slack.postMessage.mockResolvedValueOnce('1700000300.000300');
    w.slack.threadMessages.mockResolvedValueOnce([
      { ts: '1700000200.000200', user: 'U0OTHER', text: 'Also cover the SDK', team: undefined },
      { ts: '1700000250.000250', user: BOT_USER_ID, text: 'my own words', team: undefined },
    ]);
    await start.startJob(job.id);
    await w.background();

    const runs = await w.runs(job.id);
    expect(runs.map((r) => [r.kind, r.authorId, r.prompt])).toEqual([
      ['create', REQUESTER, 'Document the rate limits'],
      ['follow_up', 'U0OTHER', 'Also cover the SDK'],
    ]);
    expect(w.agent.sendMessage).toHaveBeenCalledWith('job_test_1', 'Also cover the SDK');
  });
});

describe('findCard', () => {
  it('is undefined when Slack cannot say, and names the card when it can', async () => {
    // Finding the card reads Slack alone: the parts a start calls on are never asked.
    const unused = () => Promise.reject(new Error('not used in finding the card'));
    const start = createJobStart(w.ctx, {
      checks: {} as InstructionChecks,
      dispatchReady: unused,
      catchUp: unused,
    });
    const { job } = await w.insertJob();
    w.slack.findInChannel.mockRejectedValueOnce(new SlackCallError('conversations.history', 'fatal_error'));
    expect(await start.findCard(job)).toBeUndefined();
    w.slack.findInChannel.mockResolvedValueOnce(undefined);
    expect(await start.findCard(job)).toEqual({ ts: undefined });
  });
});

describe('who can read the channel, asked as the job starts (never before Slack is acknowledged)', () => {
  it('records Slack’s answer for a job accepted as unknown', async () => {
    w.slack.conversationFacts.mockResolvedValueOnce({
      isMember: true,
      isArchived: false,
      isDirect: false,
      isPrivate: true,
    });
    const { job } = await w.insertJob({ privacy: 'unknown' });
    await start.startJob(job.id);
    expect(w.slack.conversationFacts).toHaveBeenCalledWith(CHANNEL);
    expect(await w.job(job.id)).toMatchObject({ phase: 'active', privacy: 'private' });
  });

  it('records an answer already in with the write that lets the card be posted, not in one of its own', async () => {
    w.slack.conversationFacts.mockResolvedValue({
      isMember: true,
      isArchived: false,
      isDirect: false,
      isPrivate: false,
    });
    const { job } = await w.insertJob({ privacy: 'unknown' });
    const apply = vi.spyOn(w.store, 'apply');
    await start.startJob(job.id);
    const privacyWrites = apply.mock.calls.filter(([change]) => change.job?.privacy !== undefined);
    expect(privacyWrites.map(([change]) => change.job)).toEqual([{ phase: 'posting', privacy: 'public' }]);
    expect(await w.job(job.id)).toMatchObject({ phase: 'active', privacy: 'public' });
  });

  it('keeps unknown (treated as private) when Slack cannot say, and asks nothing the request said', async () => {
    w.slack.conversationFacts.mockRejectedValueOnce(
      new SlackCallError('conversations.info', 'missing_scope'),
    );
    const unknown = (await w.insertJob({ privacy: 'unknown' })).job;
    await start.startJob(unknown.id);
    expect(await w.job(unknown.id)).toMatchObject({ phase: 'active', privacy: 'unknown' });
    const said = (await w.insertJob({ privacy: 'public', triggerKey: 'command:said' })).job;
    await start.startJob(said.id);
    expect(w.slack.conversationFacts).toHaveBeenCalledOnce();
  });
});
