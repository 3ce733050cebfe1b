import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AgentNotFoundError } from '../../src/agent/errors.js';
import type { JobPhase } from '../../src/domain/phases.js';
import { createReplyCatchUp, type Replies } from '../../src/jobs/replies.js';
import type { FollowUpRequest, ReplyRequest } from '../../src/jobs/requests.js';
import { SlackCallError } from '../../src/slack/caller.js';
import type { ThreadMessage } from '../../src/slack/message-listing.js';
import { BOT_ID, guest, TEAM } from '../helpers/fake-network.js';
import { CHANNEL, createJobWorld, INSTANCE, type JobWorld, T0 } from '../helpers/job-world.js';
import { BOT_USER_ID } from '../helpers/slack-stand-in.js';

let w: JobWorld;
let replies: Replies;
let stop: () => void;
function build(env: Record<string, string> = {}) {
  w = createJobWorld(env);
  const jobs = w.service();
  replies = jobs;
  stop = () => jobs.stop();
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

  it('is shown in the thread with its author once it is taken, inert, once however often it is processed', async () => {
    const job = await jobIn('active');
    const text = 'Fix <!channel> and *this*\n> not a quote';
    const runId = (await fromModal(job.id, { text })) ?? -1;
    await replies.processReply(runId);
    await replies.processReply(runId);
    const shown = w.outbox().filter((r) => r.key === `followup-shown:${runId}:${job.id}`);
    expect(shown).toHaveLength(1);
    expect(shown[0]?.payload).toMatchObject({
      type: 'post',
      channel: CHANNEL,
      threadTs: job.threadTs,
      about: { kind: 'notice', run: 2, source: null },
    });
    const posted = String(shown[0]?.payload.text);
    expect(posted).toContain(`<@${HELPER}> sent the agent a follow-up`);
    // What the person wrote notifies nobody and cannot break out of the quote.
    expect(posted).not.toContain('<!channel>');
    expect(posted.split('\n').slice(1)).toEqual(['>Fix @channel and *this*', '>&gt; not a quote']);
  });

  it('is not shown when it is refused, nor for a reply a message in the thread already carries', async () => {
    const job = await jobIn('active');
    const replyId = (await reply()) ?? -1;
    await replies.processReply(replyId);
    const tooLong = (await fromModal(job.id, { text: 'x'.repeat(200_000) })) ?? -1;
    await replies.processReply(tooLong);
    expect(await w.store.getRun(tooLong)).toMatchObject({ state: 'failed' });
    expect(w.outbox().some((r) => r.key === `dropped:${tooLong}`)).toBe(true);
    expect(w.outbox().filter((r) => r.key?.startsWith('followup-shown:'))).toEqual([]);
  });

  it.each([
    ['tried again as a new job', 'retried'],
    ['the agent API forgot', 'gone'],
  ] as const)(
    'is not shown in the thread of a job %s, and its author is told privately',
    async (_what, phase) => {
      const job = await jobIn(phase);
      const runId = (await fromModal(job.id)) ?? -1;
      await replies.processReply(runId);
      expect(w.outbox().filter((r) => r.key?.startsWith('followup-shown:'))).toEqual([]);
      expect(await w.store.getRun(runId)).toMatchObject({ state: 'failed' });
      expect(w.outbox().some((r) => r.key === `dropped:${runId}`)).toBe(true);
    },
  );

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

describe('replies that came before their job', () => {
  const AFTER = '1700000000.000100';
  const BEFORE = '1700000000.000900';

  const message = (ts: string, fields: Partial<ThreadMessage> = {}): ThreadMessage => ({
    ts,
    user: 'U0HELPER',
    botId: undefined,
    username: undefined,
    text: 'Also cover the SDK',
    eventType: undefined,
    team: TEAM,
    subtype: undefined,
    ...fields,
  });

  let w: JobWorld;
  beforeEach(() => {
    w = createJobWorld();
  });
  afterEach(async () => {
    await w.store.close();
  });

  /** Catch-up whose accept and process record what they were given; `known` replies are already recorded. */
  function catchUpRecording(known: string[] = []) {
    let next = 100;
    const accept = vi.fn(async (r: ReplyRequest) => (known.includes(r.messageTs) ? undefined : next++));
    const process = vi.fn(async (_runId: number, _teamId: string | undefined) => {});
    const catchUp = createReplyCatchUp({ ...w.ctx, accept, process });
    return { catchUp, accept, process };
  }

  describe('catch-up of replies posted before the job was recorded', () => {
    it('reads only the thread between the two messages and records each human reply in it, in order', async () => {
      const { job } = await w.activeJob();
      w.slack.threadMessages.mockResolvedValue([
        message('1700000000.000200', { text: 'Also cover the SDK' }),
        message('1700000000.000300', { user: 'U0OTHER', team: undefined, text: 'And the CLI' }),
      ]);
      const { catchUp, accept, process } = catchUpRecording();
      await catchUp(job, AFTER, BEFORE);

      expect(w.slack.threadMessages).toHaveBeenCalledWith(
        expect.objectContaining({ channel: CHANNEL, threadTs: THREAD, oldest: AFTER, latest: BEFORE }),
      );
      expect(accept.mock.calls.map(([r]) => r)).toEqual([
        {
          teamId: TEAM,
          channelId: CHANNEL,
          threadTs: THREAD,
          messageTs: '1700000000.000200',
          userId: 'U0HELPER',
          text: 'Also cover the SDK',
        },
        // No workspace given: the job's.
        {
          teamId: job.teamId,
          channelId: CHANNEL,
          threadTs: THREAD,
          messageTs: '1700000000.000300',
          userId: 'U0OTHER',
          text: 'And the CLI',
        },
      ]);
      expect(process.mock.calls).toEqual([
        [100, TEAM],
        [101, undefined],
      ]);
    });

    it('leaves out the bounds themselves and anything outside them, whatever Slack returned', async () => {
      const { job } = await w.activeJob();
      w.slack.threadMessages.mockResolvedValue([
        message(AFTER),
        message('1700000000.000050'),
        message(BEFORE),
        message('1700000000.000950'),
      ]);
      const { catchUp, accept } = catchUpRecording();
      await catchUp(job, AFTER, BEFORE);
      expect(accept).not.toHaveBeenCalled();
    });

    it('takes no bots, no app posts, no joins, nothing of the bot’s own and no asides as replies', async () => {
      const { job } = await w.activeJob();
      w.slack.threadMessages.mockResolvedValue([
        message('1700000000.000200', { botId: BOT_ID, user: undefined }),
        message('1700000000.000210', { botId: 'B0OTHERAPP', user: 'U0APPUSER' }),
        message('1700000000.000220', { user: BOT_USER_ID }),
        message('1700000000.000230', { eventType: 'docs_agent_notice' }),
        message('1700000000.000240', { subtype: 'channel_join', text: 'joined' }),
        message('1700000000.000250', { text: '// just between us' }),
        message('1700000000.000260', { user: undefined }),
        message('1700000000.000270', { subtype: 'thread_broadcast', text: 'Broadcast reply' }),
      ]);
      const { catchUp, accept } = catchUpRecording();
      await catchUp(job, AFTER, BEFORE);
      expect(accept.mock.calls.map(([r]) => r.text)).toEqual(['Broadcast reply']);
    });

    it('takes the bot’s mention out of a reply, and in mention mode takes only replies that mention it', async () => {
      await w.store.close();
      w = createJobWorld({ FOLLOW_UP_MODE: 'mention' });
      const { job } = await w.activeJob();
      w.slack.threadMessages.mockResolvedValue([
        message('1700000000.000200', { text: 'Talking among ourselves' }),
        message('1700000000.000300', { text: `<@${BOT_USER_ID}> also the SDK` }),
      ]);
      const { catchUp, accept } = catchUpRecording();
      await catchUp(job, AFTER, BEFORE);
      expect(accept.mock.calls.map(([r]) => [r.messageTs, r.text.trim()])).toEqual([
        ['1700000000.000300', 'also the SDK'],
      ]);
    });

    it('processes only replies the store had not recorded yet', async () => {
      const { job } = await w.activeJob();
      w.slack.threadMessages.mockResolvedValue([message('1700000000.000200'), message('1700000000.000300')]);
      const { catchUp, accept, process } = catchUpRecording(['1700000000.000200']);
      await catchUp(job, AFTER, BEFORE);
      expect(accept).toHaveBeenCalledTimes(2);
      expect(process.mock.calls).toEqual([[100, TEAM]]);
    });

    it('does nothing for a job without a thread', async () => {
      const { job } = await w.insertJob();
      const { catchUp, accept } = catchUpRecording();
      await catchUp({ ...job, threadTs: null }, AFTER, BEFORE);
      expect(w.slack.threadMessages).not.toHaveBeenCalled();
      expect(accept).not.toHaveBeenCalled();
    });

    it('when Slack cannot give the thread, logs it and lets the job go on', async () => {
      const { job } = await w.activeJob();
      w.slack.threadMessages.mockRejectedValue(new Error('ratelimited'));
      const { catchUp, accept } = catchUpRecording();
      await expect(catchUp(job, AFTER, BEFORE)).resolves.toBeUndefined();
      expect(accept).not.toHaveBeenCalled();
      expect(w.logs.some((l) => l.includes('could not read the thread for replies'))).toBe(true);
    });
  });

  describe('catch-up with the real replies', () => {
    it('records each reply as a follow-up once, however often the thread is read', async () => {
      const { job } = await w.activeJob();
      w.slack.threadMessages.mockResolvedValue([message('1700000000.000200'), message('1700000000.000300')]);
      const jobs = w.service();
      try {
        const catchUp = createReplyCatchUp({
          ...w.ctx,
          accept: jobs.acceptReply,
          process: jobs.processReply,
        });
        await catchUp(job, AFTER, BEFORE);
        await catchUp(job, AFTER, BEFORE);
        await w.background();
        const followUps = (await w.runs(job.id)).filter((r) => r.kind === 'follow_up');
        expect(followUps.map((r) => r.messageTs)).toEqual(['1700000000.000200', '1700000000.000300']);
      } finally {
        jobs.stop();
      }
    });
  });
});
