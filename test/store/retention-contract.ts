/**
 * Retention every Store implementation must show: what people wrote in finished jobs is erased
 * after the retention period, while the job, its thread and its ids stay so old threads still
 * route. Times come from a fixed clock. `open` returns a fresh, empty store; the suite closes it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobPatch, JobRecord, NewOutboxItem, Store } from '../../src/store/types.js';
import { createRun, followUp, newJob, post, T0 } from './store-contract.js';

const ERASED = '(erased after 90 days)';
const THREAD = '1700000000.000100';

export function retentionContract(name: string, open: () => Promise<Store> | Store): void {
  describe(`Store contract, retention: ${name}`, () => {
    let store: Store;

    beforeEach(async () => {
      store = await open();
    });
    afterEach(async () => {
      await store.close();
    });

    /** A job whose first run was sent, then patched (finished, by default) at `at`. */
    async function finished(key: string, patch: JobPatch = {}, at = T0): Promise<JobRecord> {
      const { job, run } = await store.insertJob(newJob(key), createRun(`Prompt of ${key}`), at);
      await store.apply(
        {
          jobId: job.id,
          job: { phase: 'idle', lastOutcome: 'completed_pr', agentJobId: `agent-${key}`, ...patch },
          run: { id: run.id, patch: { state: 'sent', sentAt: at, outcome: 'completed_pr', outcomeAt: at } },
        },
        at,
      );
      return (await store.getJob(job.id)) as JobRecord;
    }

    it('erases the instruction, prompts and response_url of a finished job, and keeps the job, its thread and its ids', async () => {
      const job = await finished('old', { threadTs: THREAD, cardTs: THREAD });
      const { run: reply } = await store.insertFollowUp(
        job.id,
        followUp('1700000000.000200', 'Secret plan'),
        T0,
      );
      await store.apply({ jobId: job.id, run: { id: reply.id, patch: { state: 'sent', sentAt: T0 } } }, T0);

      expect(await store.eraseExpired(T0 + 1, ERASED, T0 + 500, 100)).toEqual({
        jobs: 1,
        outboxItems: 0,
        homeViews: 0,
        assistantThreads: 0,
      });
      const after = await store.getJob(job.id);
      expect(after).toEqual({
        ...job,
        instruction: ERASED,
        responseUrl: null,
        erasedAt: T0 + 500,
      });
      const runs = await store.getRuns(job.id);
      expect(runs.map((r) => r.prompt)).toEqual(['', '']);
      expect(runs.map((r) => [r.seq, r.messageTs, r.state])).toEqual([
        [1, null, 'sent'],
        [2, '1700000000.000200', 'sent'],
      ]);
      // Old threads still route, and a re-delivered reply is still recognised.
      expect((await store.findJobByThread('C0DOCS', THREAD))?.id).toBe(job.id);
      expect((await store.insertFollowUp(job.id, followUp('1700000000.000200'), T0 + 600)).created).toBe(
        false,
      );
      // Nothing left to erase.
      expect((await store.eraseExpired(T0 + 1, ERASED, T0 + 700, 100)).jobs).toBe(0);
    });

    it('erases jobs that never started or were forgotten, and keeps jobs still running, with work open, or changed since', async () => {
      const erased = [
        await finished('never', { phase: 'not_started', agentJobId: null }),
        await finished('unknown', { phase: 'start_unknown', agentJobId: null }),
        await finished('gone', { phase: 'gone' }),
      ];
      const active = await finished('active', { phase: 'active', nextPollAt: T0 + 10 });
      const creating = await finished('creating', { phase: 'creating' });
      const withReply = await finished('reply-pending');
      await store.insertFollowUp(withReply.id, followUp('9.1'), T0);
      const withPost = await finished('post-pending');
      await store.enqueue([{ jobId: withPost.id, dedupeKey: null, payload: post('Outcome') }], T0);
      const recent = await finished('recent', {}, T0 + 10);

      expect((await store.eraseExpired(T0 + 5, ERASED, T0 + 500, 100)).jobs).toBe(3);
      for (const job of erased) expect((await store.getJob(job.id))?.instruction).toBe(ERASED);
      for (const job of [active, creating, withReply, withPost, recent]) {
        expect(await store.getJob(job.id)).toMatchObject({
          instruction: job.instruction,
          responseUrl: job.responseUrl,
          erasedAt: null,
        });
        expect((await store.getRuns(job.id))[0]?.prompt).toBe(`Prompt of ${job.triggerKey}`);
      }
    });

    it('erases what a thumbs-down said to fix with the job’s words, still counting the vote', async () => {
      const job = await finished('reasons', { threadTs: THREAD });
      const vote = { jobId: job.id, runSeq: 1 };
      await store.recordFeedbackReason({ ...vote, userId: 'U0OLD', reason: 'Old words' }, T0);
      expect((await store.eraseExpired(T0 + 1, ERASED, T0 + 10, 100)).jobs).toBe(1);
      expect(await store.feedbackReasons(10)).toEqual([]);
      expect(await store.feedbackTotals()).toEqual({ positive: 0, negative: 1, reasons: 1 });
      // Said after the job was erased: kept until it, too, is older than the cutoff.
      await store.recordFeedbackReason({ ...vote, userId: 'U0LATE', reason: 'Late words' }, T0 + 50);
      expect((await store.eraseExpired(T0 + 40, ERASED, T0 + 60, 100)).jobs).toBe(0);
      expect((await store.feedbackReasons(10)).map((r) => r.reason)).toEqual(['Late words']);
      expect((await store.eraseExpired(T0 + 51, ERASED, T0 + 70, 100)).jobs).toBe(1);
      expect(await store.feedbackReasons(10)).toEqual([]);
      expect((await store.eraseExpired(T0 + 51, ERASED, T0 + 80, 100)).jobs).toBe(0);
    });

    it('erases a later reply in an erased job once it, too, is older than the cutoff', async () => {
      const job = await finished('again', { threadTs: THREAD });
      await store.eraseExpired(T0 + 1, ERASED, T0 + 10, 100);
      const { run } = await store.insertFollowUp(job.id, followUp('9.2', 'A late reply'), T0 + 50);
      await store.apply(
        {
          jobId: job.id,
          job: { phase: 'idle' },
          run: { id: run.id, patch: { state: 'sent', sentAt: T0 + 60 } },
        },
        T0 + 60,
      );
      expect((await store.eraseExpired(T0 + 55, ERASED, T0 + 70, 100)).jobs).toBe(0);
      expect((await store.getRun(run.id))?.prompt).toBe('A late reply');
      expect((await store.eraseExpired(T0 + 61, ERASED, T0 + 80, 100)).jobs).toBe(1);
      expect((await store.getRun(run.id))?.prompt).toBe('');
      expect((await store.getJob(job.id))?.erasedAt).toBe(T0 + 80);
    });

    it('deletes outbox items delivered or abandoned before the cutoff, and keeps the rest and the newest', async () => {
      const item = (text: string): NewOutboxItem => ({ jobId: null, dedupeKey: text, payload: post(text) });
      await store.enqueue(['delivered', 'dead', 'late', 'waiting', 'newest'].map(item), T0);
      const due = await store.dueOutbox(T0, 10);
      const id = (text: string) =>
        due.find((i) => i.payload.type === 'post' && i.payload.text === text)?.id ?? 0;
      await store.updateOutbox(id('delivered'), { deliveredAt: T0 + 1 });
      await store.updateOutbox(id('dead'), { deadAt: T0 + 2 });
      await store.updateOutbox(id('late'), { deliveredAt: T0 + 50 });
      await store.updateOutbox(id('newest'), { deliveredAt: T0 + 3 });

      expect((await store.eraseExpired(T0 + 10, ERASED, T0 + 100, 100)).outboxItems).toBe(2);
      expect((await store.eraseExpired(T0 + 100, ERASED, T0 + 200, 100)).outboxItems).toBe(1);
      expect((await store.dueOutbox(T0 + 200, 10)).map((i) => i.id)).toEqual([id('waiting')]);
      // The deleted ones no longer hold their dedupe keys; the kept ones still do.
      await store.enqueue([item('delivered'), item('waiting')], T0 + 300);
      expect(await store.dueOutbox(T0 + 300, 10)).toHaveLength(2);
    });

    it('handles at most `limit` jobs per call', async () => {
      for (let i = 0; i < 5; i++) await finished(`batch-${i}`);
      const counts = [];
      for (let i = 0; i < 4; i++) counts.push((await store.eraseExpired(T0 + 1, ERASED, T0 + 100, 2)).jobs);
      expect(counts).toEqual([2, 2, 1, 0]);
    });

    it('forgets App Home visits older than the cutoff', async () => {
      await store.recordHomeOpened('U0ANN', 'T0TEAM', T0);
      await store.recordHomeOpened('U0BEN', 'T0TEAM', T0 + 20);
      expect((await store.eraseExpired(T0 + 10, ERASED, T0 + 100, 100)).homeViews).toBe(1);
      expect(await store.homeOpened('U0ANN')).toBe(false);
      expect(await store.homeOpened('U0BEN')).toBe(true);
    });

    it('forgets assistant threads neither Slack told about nor a message used before the cutoff', async () => {
      const thread = (threadTs: string) => ({ channelId: 'D0ANN', threadTs, contextChannelId: 'C0DOCS' });
      await store.recordAssistantThread(thread('1700000000.000300'), T0);
      await store.recordAssistantThread(thread('1700000000.000400'), T0);
      await store.recordAssistantThread(thread('1700000000.000500'), T0);
      // Told about again later, or used by a message: kept as long as it is in use.
      await store.recordAssistantThread(thread('1700000000.000400'), T0 + 20);
      await store.touchAssistantThread({ channelId: 'D0ANN', threadTs: '1700000000.000500' }, T0 + 20);
      expect((await store.eraseExpired(T0 + 10, ERASED, T0 + 100, 100)).assistantThreads).toBe(1);
      expect(await store.assistantThread('D0ANN', '1700000000.000300')).toBeUndefined();
      for (const ts of ['1700000000.000400', '1700000000.000500']) {
        expect(await store.assistantThread('D0ANN', ts)).toEqual({ contextChannelId: 'C0DOCS' });
      }
    });
  });
}
