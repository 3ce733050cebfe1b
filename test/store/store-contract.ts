/**
 * Behaviour every Store implementation must show, written against the Store interface only so
 * the same suite runs against SQLite and any server-backed implementation. `open` must return a
 * fresh, empty store for every test; the suite closes it afterwards.
 */
import type Database from 'better-sqlite3';
import fc from 'fast-check';
import type pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JOB_PRIVACIES } from '../../src/domain/privacy.js';
import type {
  JobPatch,
  JobRecord,
  NewFollowUp,
  NewJob,
  NewOutboxItem,
  NewRun,
  OutboxItem,
  RunRecord,
  Store,
  StoredPayload,
} from '../../src/store/types.js';

/** A fixed clock: every time in the suite is an offset from here. */
export const T0 = 1_700_000_000_000;

export function newJob(triggerKey: string, overrides: Partial<NewJob> = {}): NewJob {
  return {
    teamId: 'T0TEAM',
    channelId: 'C0DOCS',
    requesterId: 'U0ALICE',
    instruction: `Document the *${triggerKey}* flow`,
    triggerKey,
    responseUrl: `https://hooks.slack.test/commands/${triggerKey}`,
    pollIntervalMs: 5_000,
    ...overrides,
  };
}

export function createRun(prompt = 'Document the flow'): NewRun {
  return { kind: 'create', prompt, authorId: 'U0ALICE', messageTs: null };
}

export function followUp(
  messageTs: string,
  prompt = `Follow-up ${messageTs}`,
  authorId = 'U0BOB',
): NewFollowUp {
  return { kind: 'follow_up', prompt, authorId, messageTs };
}

export function post(text: string, threadTs = '1700000000.000100'): StoredPayload {
  return { type: 'post', channel: 'C0DOCS', threadTs, text, eventType: 'docs_agent_outcome' };
}

function item(jobId: number | null, text: string, dedupeKey: string | null = null): NewOutboxItem {
  return { jobId, dedupeKey, payload: post(text) };
}

const texts = (items: OutboxItem[]) => items.map((i) => (i.payload.type === 'post' ? i.payload.text : '?'));
const ids = (records: Array<{ id: number }>) => records.map((r) => r.id);
const byId = <T extends { id: number }>(records: T[]) => [...records].sort((a, b) => a.id - b.id);

/**
 * Heartbeats and claims are timed by the store's own clock (the server's on PostgreSQL),
 * not by the times the suite passes. Who is gone is set by the suite, not raced against real
 * time: {@link goQuiet} moves every heartbeat on record `QUIET_MS` into the past, so an
 * instance that beat before it is gone for a time-out of `TIMEOUT_MS`, and one that beat after
 * it stays alive however slowly the suite runs (a loaded machine takes seconds, never minutes).
 */
export const TIMEOUT_MS = 60_000;
export const QUIET_MS = 2 * TIMEOUT_MS;
/** A lease that outlasts any test; and one that has run out already (a stuck holder's). */
export const LONG_MS = 60_000;
export const RAN_OUT = -1;

/** The instances on record in `store` fell quiet `QUIET_MS` ago (see {@link TIMEOUT_MS}). */
export async function goQuiet(store: Store): Promise<void> {
  const sql = `UPDATE instances SET heartbeat_at = heartbeat_at - ${QUIET_MS}`;
  if ('db' in store) (store.db as Database.Database).prepare(sql).run();
  else if ('pool' in store) await (store.pool as pg.Pool).query(sql);
  else throw new Error('goQuiet knows the SQLite and PostgreSQL stores only');
}

export function storeContract(name: string, open: () => Promise<Store> | Store): void {
  describe(`Store contract: ${name}`, () => {
    let store: Store;

    beforeEach(async () => {
      store = await open();
    });
    afterEach(async () => {
      await store.close();
    });

    /** Inserts a job (and its create run) and returns both. */
    async function job(triggerKey: string, now = T0, overrides: Partial<NewJob> = {}) {
      const result = await store.insertJob(newJob(triggerKey, overrides), createRun(), now);
      expect(result.created).toBe(true);
      return result;
    }

    async function jobWith(triggerKey: string, patch: JobPatch, now = T0): Promise<JobRecord> {
      const { job: created } = await job(triggerKey, now);
      await store.apply({ jobId: created.id, job: patch }, now);
      const updated = await store.getJob(created.id);
      if (!updated) throw new Error(`job ${created.id} vanished`);
      return updated;
    }

    /** Enqueues one item at `now` (its first attempt is due then) and returns it. */
    async function enqueueAt(entry: NewOutboxItem, now: number): Promise<OutboxItem> {
      await store.enqueue([entry], now);
      const found = (await store.dueOutbox(now, 1_000)).find(
        (i) =>
          i.payload.type === 'post' && entry.payload.type === 'post' && i.payload.text === entry.payload.text,
      );
      if (!found) throw new Error(`enqueued item ${JSON.stringify(entry.payload)} is not due at ${now}`);
      return found;
    }

    describe('insertJob', () => {
      it('creates the job in phase accepted with its first run (seq 1, pending)', async () => {
        const input = newJob('trigger-1');
        const {
          job: created,
          run,
          created: isNew,
        } = await store.insertJob(input, createRun('Prompt one'), T0);

        expect(isNew).toBe(true);
        expect(typeof created.id).toBe('number');
        expect(created).toEqual<JobRecord>({
          id: created.id,
          teamId: 'T0TEAM',
          channelId: 'C0DOCS',
          threadTs: null,
          cardTs: null,
          origin: 'command',
          projectId: null,
          // Recorded without saying where it was asked: treated as private.
          privacy: 'unknown',
          contextChannelId: null,
          contextTs: null,
          rootReaction: null,
          sessionStatus: null,
          requesterId: 'U0ALICE',
          instruction: 'Document the *trigger-1* flow',
          triggerKey: 'trigger-1',
          responseUrl: 'https://hooks.slack.test/commands/trigger-1',
          agentJobId: null,
          phase: 'accepted',
          agentStatus: null,
          prLink: null,
          lastOutcome: null,
          repository: null,
          ref: null,
          model: null,
          runCount: 0,
          nextPollAt: null,
          pollIntervalMs: 5_000,
          pollFailures: 0,
          pollRefusals: 0,
          runStartedAt: null,
          lastError: null,
          owner: null,
          ownerUntil: null,
          claimedBy: null,
          claimedUntil: null,
          erasedAt: null,
          stoppedRun: null,
          createdAt: T0,
          updatedAt: T0,
        });
        expect(typeof run.id).toBe('number');
        expect(run).toEqual<RunRecord>({
          id: run.id,
          jobId: created.id,
          seq: 1,
          kind: 'create',
          prompt: 'Prompt one',
          authorId: 'U0ALICE',
          runKey: 'first',
          messageTs: null,
          state: 'pending',
          error: null,
          outcome: null,
          owner: null,
          ownerUntil: null,
          teamId: null,
          createdAt: T0,
          reservedAt: null,
          sentAt: null,
          outcomeAt: null,
        });
        expect(await store.getJob(created.id)).toEqual(created);
        expect(await store.getRuns(created.id)).toEqual([run]);
      });

      it('returns what it wrote exactly as it reads back, whatever the job and its runs hold', async () => {
        const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
        // Any Unicode text a person could send (PostgreSQL's text holds no NUL, and nor does Slack's).
        const text = (minLength = 0) =>
          fc.string({ unit: 'grapheme', minLength }).filter((s) => !s.includes('\0'));
        const ts = fc
          .integer({ min: 1, max: 9_999_999 })
          .map((n) => `1700000000.${String(n).padStart(7, '0')}`);
        const newJobs = fc.record({
          teamId: text(1),
          channelId: text(1),
          requesterId: text(1),
          instruction: text(),
          responseUrl: fc.option(fc.webUrl()),
          pollIntervalMs: fc.integer({ min: 1, max: 3_600_000 }),
          owner: maybe(fc.option(text())),
          origin: maybe(fc.constantFrom('command', 'mention', 'shortcut', 'direct' as const)),
          projectId: maybe(fc.option(text())),
          threadTs: maybe(ts),
          contextTs: maybe(fc.option(ts)),
          privacy: maybe(fc.constantFrom(...JOB_PRIVACIES)),
          contextChannelId: maybe(fc.option(text(1))),
        });
        const newRuns = fc.record({
          kind: fc.constantFrom('create', 'follow_up' as const),
          prompt: text(),
          authorId: text(1),
          messageTs: fc.option(ts),
          owner: maybe(fc.option(text())),
          teamId: maybe(fc.option(text())),
        });
        let n = 0;
        await fc.assert(
          fc.asyncProperty(
            newJobs,
            newRuns,
            newRuns,
            fc.integer({ min: 0, max: 2 ** 40 }),
            async (j, r1, r2, now) => {
              n += 1;
              const defined = <T extends object>(o: T) =>
                Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
              // Each its own thread and key: the property is about the record, not about repeats.
              const input = defined({
                ...j,
                triggerKey: `property-${n}`,
                threadTs: j.threadTs && `${j.threadTs}${n}`,
              });
              const inserted = await store.insertJob(input, defined(r1), now);
              expect(inserted.created).toBe(true);
              expect(await store.getJob(inserted.job.id)).toEqual(inserted.job);
              expect(await store.getRun(inserted.run.id)).toEqual(inserted.run);
              const second = await store.insertFollowUp(
                inserted.job.id,
                defined({ ...r2, messageTs: `${n}.second` }),
                now,
              );
              expect(second.run.seq).toBe(2);
              expect(await store.getRuns(inserted.job.id)).toEqual([inserted.run, second.run]);
            },
          ),
          { numRuns: 40 },
        );
      });

      it('records where a job was asked: its privacy and the channel its assistant pane was beside', async () => {
        const { job: pane } = await store.insertJob(
          newJob('pane', { channelId: 'D0ALICE', privacy: 'pane', contextChannelId: 'C0API' }),
          createRun(),
          T0,
        );
        expect(pane).toMatchObject({ privacy: 'pane', contextChannelId: 'C0API' });
        expect(await store.getJob(pane.id)).toEqual(pane);
        const { job: open } = await store.insertJob(newJob('public', { privacy: 'public' }), createRun(), T0);
        expect(await store.getJob(open.id)).toMatchObject({ privacy: 'public', contextChannelId: null });
      });

      it('keeps a null response URL', async () => {
        const { job: created } = await store.insertJob(
          newJob('no-url', { responseUrl: null }),
          createRun(),
          T0,
        );
        expect(created.responseUrl).toBeNull();
        expect((await store.getJob(created.id))?.responseUrl).toBeNull();
      });

      it('returns the existing job and run for a repeated trigger key, and makes no second job', async () => {
        const first = await store.insertJob(newJob('trigger-dup'), createRun('Original prompt'), T0);
        const again = await store.insertJob(
          newJob('trigger-dup', { instruction: 'Something else', requesterId: 'U0MALLORY' }),
          createRun('Another prompt'),
          T0 + 5_000,
        );

        expect(again.created).toBe(false);
        expect(again.job).toEqual(first.job);
        expect(again.run).toEqual(first.run);
        expect(again.job.instruction).toBe('Document the *trigger-dup* flow');
        expect(again.run.prompt).toBe('Original prompt');
        expect(await store.getRuns(first.job.id)).toEqual([first.run]);
        // Both would be left half done: exactly one job exists to take over.
        expect(ids((await store.takeOverOrphans('i-next', TIMEOUT_MS)).jobs)).toEqual([first.job.id]);
      });

      it('on a repeat, returns the first run as it is now, not a later follow-up', async () => {
        const first = await store.insertJob(newJob('trigger-later'), createRun(), T0);
        await store.insertFollowUp(first.job.id, followUp('1700000000.000200'), T0 + 1);
        expect(await store.claimRun(first.run.id, T0 + 2)).toBe(true);

        const again = await store.insertJob(newJob('trigger-later'), createRun(), T0 + 3);
        expect(again.created).toBe(false);
        expect(again.run.id).toBe(first.run.id);
        expect(again.run.seq).toBe(1);
        expect(again.run.state).toBe('sending');
      });

      it('gives different trigger keys different jobs, each starting at seq 1', async () => {
        const a = await job('trigger-a');
        const b = await job('trigger-b', T0 + 1);
        expect(b.job.id).not.toBe(a.job.id);
        expect(b.run.id).not.toBe(a.run.id);
        expect(a.run.seq).toBe(1);
        expect(b.run.seq).toBe(1);
        expect(b.job.createdAt).toBe(T0 + 1);
        expect(await store.getJob(a.job.id)).toEqual(a.job);
        expect(await store.getJob(b.job.id)).toEqual(b.job);
      });

      it('returns undefined for an unknown job', async () => {
        const { job: created } = await job('trigger-known');
        expect(await store.getJob(created.id + 1_000)).toBeUndefined();
        expect(await store.getRuns(created.id + 1_000)).toEqual([]);
      });
    });

    describe('rehearseInsert', () => {
      it('leaves nothing behind: the trigger key stays free and the next job is recorded as usual', async () => {
        const before = await job('before');
        await store.rehearseInsert(newJob('rehearsed'), createRun(), T0);
        await store.rehearseInsert(newJob('rehearsed'), createRun(), T0);
        expect(await store.recentJobs({ channelId: 'C0DOCS' }, 10)).toEqual([before.job]);
        const after = await store.insertJob(newJob('rehearsed'), createRun(), T0 + 1);
        expect(after.created).toBe(true);
        expect(after.run.seq).toBe(1);
        expect(await store.getRuns(after.job.id)).toHaveLength(1);
      });

      it('reports a failure of the insert itself', async () => {
        await store.close();
        await expect(store.rehearseInsert(newJob('closed'), createRun(), T0)).rejects.toThrow();
        store = await open();
      });
    });

    describe('insertFollowUp', () => {
      it('numbers follow-ups after the first run', async () => {
        const { job: j, run: first } = await job('trigger-fu');
        const second = await store.insertFollowUp(
          j.id,
          followUp('1700000000.000200', 'Also the CLI'),
          T0 + 10,
        );
        const third = await store.insertFollowUp(
          j.id,
          followUp('1700000000.000300', 'And Go', 'U0CAROL'),
          T0 + 20,
        );

        expect(second.created).toBe(true);
        expect(third.created).toBe(true);
        expect(second.run).toEqual<RunRecord>({
          id: second.run.id,
          jobId: j.id,
          seq: 2,
          kind: 'follow_up',
          prompt: 'Also the CLI',
          authorId: 'U0BOB',
          runKey: '1700000000.000200',
          messageTs: '1700000000.000200',
          state: 'pending',
          error: null,
          outcome: null,
          owner: null,
          ownerUntil: null,
          teamId: null,
          createdAt: T0 + 10,
          reservedAt: null,
          sentAt: null,
          outcomeAt: null,
        });
        expect(third.run.seq).toBe(3);
        expect(third.run.authorId).toBe('U0CAROL');
        expect(await store.getRuns(j.id)).toEqual([first, second.run, third.run]);
      });

      it('returns the existing run for the same message, without a new one', async () => {
        const { job: j } = await job('trigger-fu-dup');
        const once = await store.insertFollowUp(j.id, followUp('1700000000.000200', 'First text'), T0 + 10);
        const twice = await store.insertFollowUp(j.id, followUp('1700000000.000200', 'Edited text'), T0 + 20);

        expect(twice.created).toBe(false);
        expect(twice.run).toEqual(once.run);
        expect(twice.run.prompt).toBe('First text');
        expect((await store.getRuns(j.id)).map((r) => r.seq)).toEqual([1, 2]);

        const next = await store.insertFollowUp(j.id, followUp('1700000000.000300'), T0 + 30);
        expect(next.run.seq).toBe(3);
      });

      it('recognises a follow-up from another source by its own key, with no message', async () => {
        const { job: j } = await job('trigger-fu-keyed');
        const modal = {
          kind: 'follow_up' as const,
          prompt: 'Fix the table',
          authorId: 'U0BOB',
          messageTs: null,
        };
        const once = await store.insertFollowUp(j.id, { ...modal, runKey: 'modal:V0FIX' }, T0 + 10);
        expect(once.created).toBe(true);
        expect(once.run).toMatchObject({ seq: 2, runKey: 'modal:V0FIX', messageTs: null });
        expect(await store.getRun(once.run.id)).toEqual(once.run);

        const again = await store.insertFollowUp(
          j.id,
          { ...modal, prompt: 'Submitted again', runKey: 'modal:V0FIX' },
          T0 + 20,
        );
        expect(again).toEqual({ run: once.run, created: false });
        // Another source, and a message, are runs of their own beside it.
        const other = await store.insertFollowUp(j.id, { ...modal, runKey: 'modal:V0OTHER' }, T0 + 30);
        const reply = await store.insertFollowUp(j.id, followUp('1700000000.000200'), T0 + 40);
        expect([other.created, reply.created]).toEqual([true, true]);
        expect(reply.run.runKey).toBe('1700000000.000200');
        expect((await store.getRuns(j.id)).map((r) => r.runKey)).toEqual([
          'first',
          'modal:V0FIX',
          'modal:V0OTHER',
          '1700000000.000200',
        ]);
      });

      it('keys a run a message started by that message: the same message as a follow-up is a repeat', async () => {
        const { job: j, run: first } = await store.insertJob(
          newJob('trigger-mention', { origin: 'mention', threadTs: '1700000000.000100' }),
          { ...createRun(), messageTs: '1700000000.000100' },
          T0,
        );
        expect(first.runKey).toBe('1700000000.000100');
        const again = await store.insertFollowUp(j.id, followUp('1700000000.000100'), T0 + 10);
        expect(again).toEqual({ run: first, created: false });
      });

      it('numbers each job on its own', async () => {
        const a = await job('trigger-seq-a');
        const b = await job('trigger-seq-b');
        await store.insertFollowUp(a.job.id, followUp('1700000000.000200'), T0 + 1);
        await store.insertFollowUp(a.job.id, followUp('1700000000.000300'), T0 + 2);
        const onB = await store.insertFollowUp(b.job.id, followUp('1700000000.000400'), T0 + 3);
        expect(onB.run.seq).toBe(2);
        expect(onB.run.jobId).toBe(b.job.id);
        expect((await store.getRuns(a.job.id)).map((r) => r.seq)).toEqual([1, 2, 3]);
      });
    });

    describe('claimRun', () => {
      it('moves a pending run to sending once; a second claim fails', async () => {
        const { job: j, run } = await job('trigger-claim');
        expect(await store.claimRun(run.id, T0 + 10)).toBe(true);
        expect((await store.getRuns(j.id))[0]?.state).toBe('sending');
        expect(await store.claimRun(run.id, T0 + 11)).toBe(false);
        expect((await store.getRuns(j.id))[0]?.state).toBe('sending');
      });

      it('does not claim a run that is no longer pending, nor an unknown run', async () => {
        const { job: j, run } = await job('trigger-claim-sent');
        const fu = await store.insertFollowUp(j.id, followUp('1700000000.000200'), T0 + 1);
        await store.apply(
          { jobId: j.id, run: { id: fu.run.id, patch: { state: 'failed', error: 'refused' } } },
          T0 + 2,
        );

        expect(await store.claimRun(fu.run.id, T0 + 3)).toBe(false);
        expect(await store.claimRun(run.id + fu.run.id + 1_000, T0 + 3)).toBe(false);
        const runs = await store.getRuns(j.id);
        expect(runs.map((r) => r.state)).toEqual(['pending', 'failed']);
      });
    });

    describe('apply', () => {
      it('applies a job patch, a run patch, a run-count increment and enqueued items together', async () => {
        const { job: before, run } = await job('trigger-apply');
        const patch: JobPatch = {
          phase: 'active',
          threadTs: '1700000000.000100',
          agentJobId: 'job_42',
          agentStatus: 'RUNNING',
          prLink: 'https://github.com/example/docs/pull/7',
          lastOutcome: 'completed_pr',
          repository: 'example/docs',
          ref: 'main',
          model: 'docs-model-1',
          nextPollAt: T0 + 5_000,
          pollIntervalMs: 10_000,
          pollFailures: 2,
          pollRefusals: 1,
          runStartedAt: T0 + 50,
          lastError: 'timeout',
        };
        await store.apply(
          {
            jobId: before.id,
            job: patch,
            run: { id: run.id, patch: { state: 'sent', sentAt: T0 + 50 } },
            incrementRunCount: true,
            enqueue: [
              {
                jobId: before.id,
                dedupeKey: 'root-update',
                payload: { type: 'update_root', channel: 'C0DOCS', ts: '1' },
              },
              {
                jobId: null,
                dedupeKey: null,
                payload: { type: 'respond', responseUrl: 'https://hooks.slack.test/r', text: 'Started' },
              },
            ],
          },
          T0 + 100,
        );

        expect(await store.getJob(before.id)).toEqual<JobRecord>({
          ...before,
          ...patch,
          runCount: 1,
          updatedAt: T0 + 100,
        } as JobRecord);
        expect(await store.getRuns(before.id)).toEqual([{ ...run, state: 'sent', sentAt: T0 + 50 }]);

        const due = await store.dueOutbox(T0 + 100, 10);
        expect(due).toHaveLength(2);
        expect(due.map((i) => [i.jobId, i.dedupeKey, i.payload])).toEqual([
          [before.id, 'root-update', { type: 'update_root', channel: 'C0DOCS', ts: '1' }],
          [null, null, { type: 'respond', responseUrl: 'https://hooks.slack.test/r', text: 'Started' }],
        ]);
        for (const i of due) {
          expect(i).toMatchObject({
            attempts: 0,
            nextAttemptAt: T0 + 100,
            createdAt: T0 + 100,
            startedAt: null,
            deliveredAt: null,
            deadAt: null,
            lastError: null,
          });
        }
        expect(await store.nextOutboxAt(T0)).toBe(T0 + 100);
      });

      it('changes a run only while it is in an expected state (an edit of a waiting reply)', async () => {
        const { job: j } = await job('trigger-expect-run');
        const { run: fu } = await store.insertFollowUp(
          j.id,
          followUp('1700000001.000001', 'Add a table'),
          T0 + 1,
        );
        const edit = (prompt: string) => ({
          jobId: j.id,
          expectRun: { id: fu.id, states: ['pending', 'ready'] as const },
          run: { id: fu.id, patch: { prompt } },
          enqueue: [{ jobId: j.id, dedupeKey: `edit:${prompt}`, payload: post(prompt) }],
        });
        expect(await store.apply(edit('Add two tables'), T0 + 2)).toBe(true);
        expect((await store.getRun(fu.id))?.prompt).toBe('Add two tables');
        // A batch takes it: an edit arriving now changes nothing, and queues nothing.
        expect((await store.claimReadyRuns(j.id, 'i-1', T0 + 3, LONG_MS)).length).toBe(0);
        await store.apply({ jobId: j.id, run: { id: fu.id, patch: { state: 'ready' } } }, T0 + 3);
        expect((await store.claimReadyRuns(j.id, 'i-1', T0 + 4, LONG_MS)).map((r) => r.prompt)).toEqual([
          'Add two tables',
        ]);
        expect(await store.apply(edit('Add three tables'), T0 + 5)).toBe(false);
        expect((await store.getRun(fu.id))?.prompt).toBe('Add two tables');
        expect((await store.dueOutbox(T0 + 5, 10)).map((i) => i.dedupeKey)).toEqual(['edit:Add two tables']);
        // A run that does not exist never holds an expectation.
        const missing = { ...edit('x'), expectRun: { id: fu.id + 1_000, states: ['pending'] as const } };
        expect(await store.apply(missing, T0 + 6)).toBe(false);
      });

      it('records a run outcome and clears fields set to null', async () => {
        const { job: j, run } = await job('trigger-outcome');
        await store.apply(
          {
            jobId: j.id,
            job: { phase: 'active', nextPollAt: T0 + 10, lastError: 'boom', agentJobId: 'job_1' },
          },
          T0 + 1,
        );
        await store.apply(
          {
            jobId: j.id,
            job: { phase: 'idle', nextPollAt: null, lastError: null, lastOutcome: 'failed' },
            run: {
              id: run.id,
              patch: { state: 'sent', outcome: 'failed', outcomeAt: T0 + 20, error: 'agent failed' },
            },
          },
          T0 + 20,
        );

        const after = await store.getJob(j.id);
        expect(after).toMatchObject({
          phase: 'idle',
          nextPollAt: null,
          lastError: null,
          lastOutcome: 'failed',
          agentJobId: 'job_1',
          updatedAt: T0 + 20,
        });
        expect((await store.getRuns(j.id))[0]).toEqual<RunRecord>({
          ...run,
          state: 'sent',
          outcome: 'failed',
          outcomeAt: T0 + 20,
          error: 'agent failed',
        });
      });

      it('leaves fields out of the patch untouched, and increments the run count each time', async () => {
        const { job: j } = await job('trigger-count');
        await store.apply({ jobId: j.id, job: { agentJobId: 'job_9', phase: 'active' } }, T0 + 1);
        await store.apply({ jobId: j.id, incrementRunCount: true }, T0 + 2);
        await store.apply({ jobId: j.id, job: { agentStatus: 'RUNNING' }, incrementRunCount: true }, T0 + 3);

        const after = await store.getJob(j.id);
        expect(after).toMatchObject({
          agentJobId: 'job_9',
          phase: 'active',
          agentStatus: 'RUNNING',
          runCount: 2,
          instruction: j.instruction,
          triggerKey: 'trigger-count',
          createdAt: T0,
        });
      });

      it('enqueues one item per dedupe key, keeping the first', async () => {
        const { job: j } = await job('trigger-dedupe');
        await store.apply({ jobId: j.id, enqueue: [item(null, 'first', 'outcome:1')] }, T0 + 1);
        await store.apply({ jobId: j.id, enqueue: [item(null, 'second', 'outcome:1')] }, T0 + 2);
        await store.enqueue([item(null, 'third', 'outcome:1'), item(null, 'fourth', 'outcome:1')], T0 + 3);

        const due = await store.dueOutbox(T0 + 10, 10);
        expect(texts(due)).toEqual(['first']);
        expect(due[0]?.dedupeKey).toBe('outcome:1');
        expect(due[0]?.nextAttemptAt).toBe(T0 + 1);
      });

      it('does not treat a null dedupe key as a key', async () => {
        await store.enqueue([item(null, 'one'), item(null, 'two')], T0);
        await store.enqueue([item(null, 'three')], T0 + 1);
        expect(texts(await store.dueOutbox(T0 + 10, 10))).toEqual(['one', 'two', 'three']);
      });

      it('still refuses a dedupe key after its item was delivered', async () => {
        const first = await enqueueAt(item(null, 'once', 'reaction:eyes'), T0);
        await store.updateOutbox(first.id, { deliveredAt: T0 + 1, startedAt: T0 + 1, attempts: 1 });
        await store.enqueue([item(null, 'twice', 'reaction:eyes')], T0 + 2);
        expect(await store.dueOutbox(T0 + 10, 10)).toEqual([]);
        expect(await store.nextOutboxAt(T0)).toBeUndefined();
      });
    });

    describe('assistant threads', () => {
      it('records the channel the pane is beside, and never lets an older event overwrite a newer one', async () => {
        const thread = { channelId: 'D0ALICE', threadTs: '1700000000.000900' };
        expect(await store.assistantThread(thread.channelId, thread.threadTs)).toBeUndefined();
        await store.recordAssistantThread({ ...thread, contextChannelId: 'C0ONE' }, T0);
        await store.recordAssistantThread({ ...thread, contextChannelId: 'C0TWO' }, T0 + 2);
        // A late re-delivery of an event between them.
        await store.recordAssistantThread({ ...thread, contextChannelId: 'C0LATE' }, T0 + 1);
        expect(await store.assistantThread(thread.channelId, thread.threadTs)).toEqual({
          contextChannelId: 'C0TWO',
        });
        await store.recordAssistantThread({ ...thread, contextChannelId: null }, T0 + 3);
        expect(await store.assistantThread(thread.channelId, thread.threadTs)).toEqual({
          contextChannelId: null,
        });
      });

      it('marks a thread used: later, never earlier, its channel kept; an event after that still counts', async () => {
        const thread = { channelId: 'D0ALICE', threadTs: '1700000000.000901' };
        await store.touchAssistantThread(thread, T0);
        expect(await store.assistantThread(thread.channelId, thread.threadTs)).toBeUndefined();
        await store.recordAssistantThread({ ...thread, contextChannelId: 'C0ONE' }, T0);
        await store.touchAssistantThread(thread, T0 + 10);
        await store.touchAssistantThread(thread, T0 + 5);
        // Slack's event from before the use no longer wins; one from after it does.
        await store.recordAssistantThread({ ...thread, contextChannelId: 'C0OLD' }, T0 + 9);
        expect(await store.assistantThread(thread.channelId, thread.threadTs)).toEqual({
          contextChannelId: 'C0ONE',
        });
        await store.recordAssistantThread({ ...thread, contextChannelId: 'C0TWO' }, T0 + 10);
        expect(await store.assistantThread(thread.channelId, thread.threadTs)).toEqual({
          contextChannelId: 'C0TWO',
        });
      });
    });

    describe('findJobByThread', () => {
      it('finds a job by channel and thread once its root is posted', async () => {
        const { job: j } = await job('trigger-thread');
        await job('trigger-other');
        expect(await store.findJobByThread('C0DOCS', '1700000000.000100')).toBeUndefined();

        await store.apply({ jobId: j.id, job: { threadTs: '1700000000.000100', phase: 'creating' } }, T0 + 1);

        const found = await store.findJobByThread('C0DOCS', '1700000000.000100');
        expect(found?.id).toBe(j.id);
        expect(found).toEqual(await store.getJob(j.id));
        expect(found?.threadTs).toBe('1700000000.000100');
        expect(await store.findJobByThread('C0OTHER', '1700000000.000100')).toBeUndefined();
        expect(await store.findJobByThread('C0DOCS', '1700000000.000999')).toBeUndefined();
      });

      it('tells apart jobs with the same ts in different channels', async () => {
        const a = await job('trigger-chan-a', T0, { channelId: 'C0AAA' });
        const b = await job('trigger-chan-b', T0, { channelId: 'C0BBB' });
        await store.apply({ jobId: a.job.id, job: { threadTs: '1700000000.000500' } }, T0 + 1);
        await store.apply({ jobId: b.job.id, job: { threadTs: '1700000000.000500' } }, T0 + 1);
        expect((await store.findJobByThread('C0AAA', '1700000000.000500'))?.id).toBe(a.job.id);
        expect((await store.findJobByThread('C0BBB', '1700000000.000500'))?.id).toBe(b.job.id);
      });
    });

    describe('threadOfOpenMessage', () => {
      it('finds the thread of a message that is an instruction still open, in its own channel only', async () => {
        const thread = '1700000000.000600';
        const { job: j } = await job('trigger-open', T0, { threadTs: thread });
        const { run: waiting } = await store.insertFollowUp(j.id, followUp('1700000000.000610'), T0);
        const { run: sent } = await store.insertFollowUp(j.id, followUp('1700000000.000620'), T0);
        await store.apply({ jobId: j.id, run: { id: sent.id, patch: { state: 'sent', sentAt: T0 } } }, T0);
        expect(await store.threadOfOpenMessage('C0DOCS', '1700000000.000610')).toBe(thread);
        expect(await store.threadOfOpenMessage('C0OTHER', '1700000000.000610')).toBeUndefined();
        // Sent (or never recorded): nothing open to take back.
        expect(await store.threadOfOpenMessage('C0DOCS', '1700000000.000620')).toBeUndefined();
        expect(await store.threadOfOpenMessage('C0DOCS', '1700000000.000699')).toBeUndefined();
        for (const state of ['ready', 'sending'] as const) {
          await store.apply({ jobId: j.id, run: { id: waiting.id, patch: { state } } }, T0);
          expect(await store.threadOfOpenMessage('C0DOCS', '1700000000.000610')).toBe(thread);
        }
      });
    });

    describe('dueJobs', () => {
      it('returns only active jobs whose next poll is due, soonest first, up to the limit', async () => {
        const a = await jobWith('due-a', { phase: 'active', nextPollAt: T0 + 30 });
        const b = await jobWith('due-b', { phase: 'active', nextPollAt: T0 + 10 });
        const c = await jobWith('due-c', { phase: 'active', nextPollAt: T0 + 20 });
        await jobWith('later', { phase: 'active', nextPollAt: T0 + 100 });
        await jobWith('idle', { phase: 'idle', nextPollAt: T0 + 5 });
        await jobWith('posting', { nextPollAt: T0 + 1 });
        await jobWith('creating', { phase: 'creating', nextPollAt: T0 + 2 });
        await jobWith('unknown', { phase: 'start_unknown', nextPollAt: T0 + 3 });
        await jobWith('never', { phase: 'active', nextPollAt: null });

        expect(ids(await store.dueJobs(T0 + 50, 10))).toEqual([b.id, c.id, a.id]);
        expect(await store.dueJobs(T0 + 50, 10)).toEqual([b, c, a]);
        expect(ids(await store.dueJobs(T0 + 50, 2))).toEqual([b.id, c.id]);
        expect(ids(await store.dueJobs(T0 + 50, 1))).toEqual([b.id]);
        // Due exactly at `now` counts.
        expect(ids(await store.dueJobs(T0 + 20, 10))).toEqual([b.id, c.id]);
        expect(await store.dueJobs(T0 + 9, 10)).toEqual([]);
        expect(ids(await store.dueJobs(T0 + 1_000, 10))).toHaveLength(4);
      });

      it('follows next-poll changes made by apply', async () => {
        const a = await jobWith('resched-a', { phase: 'active', nextPollAt: T0 + 10 });
        const b = await jobWith('resched-b', { phase: 'active', nextPollAt: T0 + 20 });
        await store.apply({ jobId: a.id, job: { nextPollAt: T0 + 40 } }, T0 + 10);
        expect(ids(await store.dueJobs(T0 + 30, 10))).toEqual([b.id]);
        await store.apply({ jobId: b.id, job: { phase: 'idle', nextPollAt: null } }, T0 + 20);
        expect(ids(await store.dueJobs(T0 + 50, 10))).toEqual([a.id]);
      });
    });

    describe('takeOverOrphans', () => {
      it('takes jobs left accepted, posting or creating, and follow-ups left pending or sending', async () => {
        const accepted = await job('int-accepted');
        const posting = await jobWith('int-posting', { phase: 'posting' });
        const creating = await job('int-creating');
        await store.apply({ jobId: creating.job.id, job: { phase: 'creating', threadTs: '1.1' } }, T0 + 1);
        expect(await store.claimRun(creating.run.id, T0 + 2)).toBe(true);
        const active = await jobWith('int-active', { phase: 'active', nextPollAt: T0 + 10 });
        const idle = await jobWith('int-idle', { phase: 'idle' });
        for (const phase of ['not_started', 'start_unknown', 'gone'] as const)
          await jobWith(`int-${phase}`, { phase });

        const waiting = await store.insertFollowUp(active.id, followUp('2.1'), T0 + 3);
        const sending = await store.insertFollowUp(active.id, followUp('2.2'), T0 + 4);
        expect(await store.claimRun(sending.run.id, T0 + 5)).toBe(true);
        const sent = await store.insertFollowUp(idle.id, followUp('3.1'), T0 + 6);
        await store.apply(
          { jobId: idle.id, run: { id: sent.run.id, patch: { state: 'sent', sentAt: T0 + 7 } } },
          T0 + 7,
        );
        const failed = await store.insertFollowUp(idle.id, followUp('3.2'), T0 + 8);
        await store.apply({ jobId: idle.id, run: { id: failed.run.id, patch: { state: 'failed' } } }, T0 + 9);
        const unknown = await store.insertFollowUp(idle.id, followUp('3.3'), T0 + 10);
        await store.apply(
          { jobId: idle.id, run: { id: unknown.run.id, patch: { state: 'unknown' } } },
          T0 + 11,
        );

        const found = await store.takeOverOrphans('i-next', TIMEOUT_MS);
        expect(byId(found.jobs).map((j) => [j.id, j.phase])).toEqual([
          [accepted.job.id, 'accepted'],
          [posting.id, 'posting'],
          [creating.job.id, 'creating'],
        ]);
        expect(byId(found.jobs)[2]).toEqual(await store.getJob(creating.job.id));
        expect(found.jobs.every((j) => j.owner === 'i-next')).toBe(true);
        // Create runs are recovered through their job, not listed here.
        expect(byId(found.runs).map((r) => [r.id, r.kind, r.state])).toEqual([
          [waiting.run.id, 'follow_up', 'pending'],
          [sending.run.id, 'follow_up', 'sending'],
        ]);
      });

      it('is empty when nothing was left half done', async () => {
        await jobWith('calm', { phase: 'active', nextPollAt: T0 + 10 });
        expect(await store.takeOverOrphans('i-next', TIMEOUT_MS)).toEqual({ jobs: [], runs: [] });
      });
    });

    describe('claims', () => {
      it('claims due jobs once until the claim runs out, soonest first', async () => {
        const a = await jobWith('claim-a', { phase: 'active', nextPollAt: T0 + 20 });
        const b = await jobWith('claim-b', { phase: 'active', nextPollAt: T0 + 10 });
        const c = await jobWith('claim-c', { phase: 'active', nextPollAt: T0 + 30 });

        const asked = Date.now();
        const first = await store.claimDueJobs('i-1', T0 + 50, 2, LONG_MS);
        expect(ids(first)).toEqual([b.id, a.id]);
        expect(first.map((j) => j.claimedBy)).toEqual(['i-1', 'i-1']);
        // The claim lasts LONG_MS from now by the store's clock, whatever the due time passed.
        for (const j of first) {
          expect(j.claimedUntil).toBeGreaterThanOrEqual(asked + LONG_MS - 1_000);
          expect(j.claimedUntil).toBeLessThanOrEqual(Date.now() + LONG_MS + 1_000);
        }
        expect(ids(await store.claimDueJobs('i-2', T0 + 50, 10, RAN_OUT))).toEqual([c.id]);
        // A claim that ran out (its holder is stuck) can be taken again; the others cannot.
        expect(ids(await store.claimDueJobs('i-3', T0 + 1_000, 10, LONG_MS))).toEqual([c.id]);
      });

      it('takes due jobs in turns across channels, so a burst in one cannot starve another', async () => {
        const burst = [];
        for (let i = 0; i < 6; i++)
          burst.push(await jobWith(`burst-${i}`, { phase: 'active', nextPollAt: T0 + i }));
        const quiet = [
          await jobWith('quiet-0', { phase: 'active', nextPollAt: T0 + 40 }),
          await jobWith('quiet-1', { phase: 'active', nextPollAt: T0 + 50 }),
        ];
        for (const j of quiet) await store.apply({ jobId: j.id, job: { channelId: 'C0QUIET' } }, T0);
        const claimed = await store.claimDueJobs('i-1', T0 + 100, 4, LONG_MS);
        expect(byId(claimed).map((j) => j.triggerKey)).toEqual(['burst-0', 'burst-1', 'quiet-0', 'quiet-1']);
        expect(ids(await store.claimDueJobs('i-1', T0 + 100, 10, LONG_MS))).toEqual(
          burst.slice(2).map((j) => j.id),
        );
      });

      it('ends a claim on release or reschedule; a release by another instance does nothing', async () => {
        const a = await jobWith('release-a', { phase: 'active', nextPollAt: T0 });
        await store.claimDueJobs('i-1', T0, 10, LONG_MS);
        await store.releaseJob(a.id, 'i-2');
        expect(await store.dueJobs(T0 + 1, 10)).toEqual([]);
        await store.releaseJob(a.id, 'i-1');
        expect(ids(await store.dueJobs(T0 + 1, 10))).toEqual([a.id]);

        await store.claimDueJobs('i-1', T0 + 1, 10, LONG_MS);
        await store.apply(
          { jobId: a.id, job: { nextPollAt: T0 + 5, claimedBy: null, claimedUntil: null } },
          T0 + 2,
        );
        expect(ids(await store.dueJobs(T0 + 5, 10))).toEqual([a.id]);
      });

      it('gives concurrent claimers disjoint jobs until every due job is taken', async () => {
        for (let i = 0; i < 20; i++) await jobWith(`race-${i}`, { phase: 'active', nextPollAt: T0 + i });
        const all: number[] = [];
        for (let round = 0; round < 10 && all.length < 20; round++) {
          const claims = await Promise.all(
            ['i-1', 'i-2', 'i-3', 'i-4'].map((id) => store.claimDueJobs(id, T0 + 100, 3, LONG_MS)),
          );
          all.push(...claims.flatMap(ids));
        }
        expect(all).toHaveLength(20);
        expect(new Set(all).size).toBe(20);
      });

      it('claims outbox items once, keeps a job’s later posts back, and ends the claim with the attempt', async () => {
        const { job: j } = await job('claim-outbox');
        await store.enqueue([item(j.id, 'j1'), item(j.id, 'j2'), item(null, 'loose')], T0);
        const first = await store.claimOutbox('i-1', T0, 10, 1_000);
        expect(texts(first)).toEqual(['j1', 'loose']);
        expect(first.map((i) => [i.claimedBy, i.attempts, i.startedAt])).toEqual([
          ['i-1', 1, T0],
          ['i-1', 1, T0],
        ]);
        expect(await store.claimOutbox('i-2', T0, 10, 1_000)).toEqual([]);
        // The claim's end, moved onto the caller's clock: about a second from the caller's now.
        const next = (await store.nextOutboxAt(T0)) ?? 0;
        expect(next).toBeGreaterThan(T0 + 500);
        expect(next).toBeLessThanOrEqual(T0 + 1_000);

        const [j1] = first;
        await store.updateOutbox(j1?.id ?? 0, { deliveredAt: T0 + 1, claimedBy: null, claimedUntil: null });
        expect(texts(await store.claimOutbox('i-2', T0 + 2, 10, 1_000))).toEqual(['j2']);
      });

      it('gives concurrent outbox claimers disjoint items', async () => {
        await store.enqueue(
          Array.from({ length: 20 }, (_, i) => item(null, `n${i}`)),
          T0,
        );
        const claims = await Promise.all(
          ['i-1', 'i-2', 'i-3'].map((id) => store.claimOutbox(id, T0, 10, LONG_MS)),
        );
        const all = claims.flatMap(ids);
        expect(all).toHaveLength(20);
        expect(new Set(all).size).toBe(20);
      });
    });

    describe('pendingRuns', () => {
      it('lists the pending runs of one job in order', async () => {
        const { job: j, run } = await job('pending-runs');
        const other = await job('pending-other');
        expect(await store.claimRun(run.id, T0 + 1)).toBe(true);
        const a = await store.insertFollowUp(j.id, followUp('4.1'), T0 + 2);
        const b = await store.insertFollowUp(j.id, followUp('4.2'), T0 + 3);
        const c = await store.insertFollowUp(j.id, followUp('4.3'), T0 + 4);
        await store.insertFollowUp(other.job.id, followUp('4.4'), T0 + 5);
        expect(await store.claimRun(b.run.id, T0 + 6)).toBe(true);

        expect(await store.pendingRuns(j.id)).toEqual([a.run, c.run]);
        await store.apply(
          { jobId: j.id, run: { id: a.run.id, patch: { state: 'failed', error: 'refused' } } },
          T0 + 7,
        );
        expect(ids(await store.pendingRuns(j.id))).toEqual([c.run.id]);
      });
    });

    describe('jobs started inside a thread', () => {
      it('records origin, project, thread and context, and keeps one job per thread', async () => {
        const { job: j } = await job('in-thread', T0, {
          origin: 'mention',
          projectId: 'proj-b',
          threadTs: '1700000000.000500',
          contextTs: '1700000000.000700',
        });
        expect(j).toMatchObject({
          origin: 'mention',
          projectId: 'proj-b',
          threadTs: '1700000000.000500',
          contextTs: '1700000000.000700',
          cardTs: null,
        });
        expect((await store.findJobByThread('C0DOCS', '1700000000.000500'))?.id).toBe(j.id);
        const again = await store.insertJob(
          newJob('in-thread-2', { origin: 'shortcut', threadTs: '1700000000.000500' }),
          createRun(),
          T0 + 1,
        );
        expect(again.created).toBe(false);
        expect(again.job.id).toBe(j.id);
        expect(again.job.triggerKey).toBe('in-thread');
      });

      it('records one of two starts racing in one thread, and returns it to the other', async () => {
        const threadTs = '1700000000.000777';
        const results = await Promise.all(
          ['race-a', 'race-b'].map((key) => store.insertJob(newJob(key, { threadTs }), createRun(), T0)),
        );
        expect(results.filter((r) => r.created)).toHaveLength(1);
        expect(new Set(results.map((r) => r.job.id)).size).toBe(1);
        expect((await store.findJobByThread('C0DOCS', threadTs))?.id).toBe(results[0]?.job.id);
      });

      it('gives the thread of a job that never ran, or that the agent API forgot, to a new job', async () => {
        for (const phase of ['not_started', 'gone'] as const) {
          const threadTs = `1700000000.00${phase.length}`;
          const { job: old } = await job(`old-${phase}`, T0, { threadTs });
          await store.apply({ jobId: old.id, job: { phase } }, T0 + 1);
          const fresh = await store.insertJob(newJob(`new-${phase}`, { threadTs }), createRun(), T0 + 2);
          expect(fresh.created).toBe(true);
          expect((await store.findJobByThread('C0DOCS', threadTs))?.id).toBe(fresh.job.id);
          expect((await store.getJob(old.id))?.threadTs).toBeNull();
        }
        // The same start seen again (a re-delivery) keeps its own thread.
        const { job: neverRan } = await job('refused-start', T0, { threadTs: '1700000000.000888' });
        await store.apply({ jobId: neverRan.id, job: { phase: 'not_started' } }, T0 + 1);
        const repeat = await store.insertJob(
          newJob('refused-start', { threadTs: '1700000000.000888' }),
          createRun(),
          T0 + 2,
        );
        expect(repeat.created).toBe(false);
        expect((await store.findJobByThread('C0DOCS', '1700000000.000888'))?.id).toBe(neverRan.id);
        const { job: unknown } = await job('old-unknown', T0, { threadTs: '1700000000.000999' });
        await store.apply({ jobId: unknown.id, job: { phase: 'start_unknown' } }, T0 + 1);
        const refused = await store.insertJob(
          newJob('new-unknown', { threadTs: '1700000000.000999' }),
          createRun(),
          T0 + 2,
        );
        expect(refused.created).toBe(false);
        expect(refused.job.id).toBe(unknown.id);
      });
    });

    describe('a job tried again (replaces)', () => {
      const threadTs = '1700000000.004200';
      const cardUpdate = (jobId: number): NewOutboxItem => ({
        jobId,
        dedupeKey: null,
        payload: { type: 'update_root', channel: 'C0DOCS', ts: threadTs },
      });
      const retryOf = (old: JobRecord, from: JobRecord['phase'], overrides: Partial<NewJob> = {}) =>
        newJob(`retry:${old.id}`, {
          requesterId: 'U0BOB',
          threadTs,
          replaces: { jobId: old.id, from, to: 'retried', enqueue: [cardUpdate(old.id)] },
          ...overrides,
        });

      it('moves the old job, gives its thread and root emoji to the new one, and queues its card, in one write', async () => {
        const { job: old } = await job('failed-run', T0, { threadTs });
        await store.apply({ jobId: old.id, job: { phase: 'idle', lastOutcome: 'failed' } }, T0 + 1);
        await store.setRootReaction(old.id, 'x');
        const retry = await store.insertJob(retryOf(old, 'idle'), createRun('Again'), T0 + 2);
        expect(retry.created).toBe(true);
        expect(retry.job).toMatchObject({
          requesterId: 'U0BOB',
          phase: 'accepted',
          threadTs,
          rootReaction: 'x',
        });
        expect(retry.run.prompt).toBe('Again');
        expect(await store.getJob(old.id)).toMatchObject({ phase: 'retried', threadTs: null });
        expect((await store.findJobByThread('C0DOCS', threadTs))?.id).toBe(retry.job.id);
        expect((await store.dueOutbox(T0 + 2, 10)).map((i) => i.jobId)).toEqual([old.id]);
      });

      it('happens once: a repeat, or a retry racing it, gets the retry recorded first', async () => {
        const { job: old } = await job('failed-start', T0, { threadTs });
        await store.apply({ jobId: old.id, job: { phase: 'start_unknown' } }, T0 + 1);
        const results = await Promise.all(
          [1, 2, 3].map(() => store.insertJob(retryOf(old, 'start_unknown'), createRun(), T0 + 2)),
        );
        expect(results.filter((r) => r.created)).toHaveLength(1);
        expect(new Set(results.map((r) => r.job.id)).size).toBe(1);
        const again = await store.insertJob(retryOf(old, 'start_unknown'), createRun(), T0 + 3);
        expect(again).toMatchObject({ created: false, job: { id: results[0]?.job.id } });
        expect(await store.dueOutbox(T0 + 3, 10)).toHaveLength(1);
      });

      it('writes nothing when the old job moved on since it was read', async () => {
        const { job: old } = await job('moved-on', T0, { threadTs });
        await store.apply({ jobId: old.id, job: { phase: 'active' } }, T0 + 1);
        const result = await store.insertJob(retryOf(old, 'idle'), createRun(), T0 + 2);
        expect(result.created).toBe(false);
        expect(result.job).toMatchObject({ id: old.id, phase: 'active', threadTs });
        expect(await store.dueOutbox(T0 + 2, 10)).toEqual([]);
        expect((await store.recentJobs({ channelId: 'C0DOCS' }, 10)).map((j) => j.id)).toEqual([old.id]);
      });
    });

    describe('the author’s workspace', () => {
      it('keeps the workspace of a reply’s author (another one in a shared channel)', async () => {
        const { job: j } = await job('shared-channel');
        const other = await store.insertFollowUp(j.id, { ...followUp('8.1'), teamId: 'T0OTHER' }, T0 + 1);
        const own = await store.insertFollowUp(j.id, followUp('8.2'), T0 + 2);
        expect((await store.getRun(other.run.id))?.teamId).toBe('T0OTHER');
        expect((await store.getRun(own.run.id))?.teamId).toBeNull();
      });
    });

    describe('ready follow-ups (batches)', () => {
      it('claims every ready follow-up of the job at once, oldest first, and only once', async () => {
        const { job: j, run } = await job('batch');
        const other = await job('batch-other');
        expect(await store.claimRun(run.id, T0 + 1)).toBe(true);
        const runs = [];
        for (const ts of ['5.1', '5.2', '5.3'])
          runs.push((await store.insertFollowUp(j.id, followUp(ts), T0 + 2)).run);
        const elsewhere = (await store.insertFollowUp(other.job.id, followUp('5.9'), T0 + 2)).run;
        const [a, b, c] = runs as [RunRecord, RunRecord, RunRecord];
        for (const r of [a, c, elsewhere])
          await store.apply({ jobId: r.jobId, run: { id: r.id, patch: { state: 'ready' } } }, T0 + 3);

        expect(ids(await store.readyRuns(j.id))).toEqual([a.id, c.id]);
        const [first, second] = await Promise.all([
          store.claimReadyRuns(j.id, 'i-1', T0 + 4, LONG_MS),
          store.claimReadyRuns(j.id, 'i-2', T0 + 4, LONG_MS),
        ]);
        const claimed = [...(first ?? []), ...(second ?? [])];
        expect(ids(claimed)).toEqual([a.id, c.id]);
        expect(claimed.every((r) => r.state === 'sending' && r.sentAt === T0 + 4)).toBe(true);
        // The claimer owns the whole batch, whoever accepted each reply.
        expect(new Set(claimed.map((r) => r.owner)).size).toBe(1);
        expect((await store.getRun(b.id))?.state).toBe('pending');
        expect((await store.getRun(elsewhere.id))?.state).toBe('ready');
        expect(await store.readyRuns(j.id)).toEqual([]);
      });

      it('hands ready follow-ups of a gone instance to the adopter', async () => {
        const { job: j, run } = await job('batch-adopt');
        await store.claimRun(run.id, T0 + 1);
        const { run: fu } = await store.insertFollowUp(j.id, { ...followUp('6.1'), owner: 'i-gone' }, T0 + 2);
        await store.apply({ jobId: j.id, run: { id: fu.id, patch: { state: 'ready' } } }, T0 + 3);
        const orphans = await store.takeOverOrphans('i-live', TIMEOUT_MS);
        expect(ids(orphans.runs)).toEqual([fu.id]);
      });
    });

    describe('listing and quota', () => {
      it('lists a person’s and a channel’s recent jobs, newest first, up to the limit', async () => {
        const a = await job('list-a', T0, { requesterId: 'U0ANN', channelId: 'C0ONE' });
        const b = await job('list-b', T0 + 1, { requesterId: 'U0ANN', channelId: 'C0TWO' });
        const c = await job('list-c', T0 + 2, { requesterId: 'U0BEN', channelId: 'C0ONE' });
        const d = await job('list-d', T0 + 3, { requesterId: 'U0ANN', channelId: 'C0ONE' });
        expect(ids(await store.recentJobs({ requesterId: 'U0ANN' }, 10))).toEqual([
          d.job.id,
          b.job.id,
          a.job.id,
        ]);
        expect(ids(await store.recentJobs({ requesterId: 'U0ANN' }, 2))).toEqual([d.job.id, b.job.id]);
        expect(ids(await store.recentJobs({ channelId: 'C0ONE' }, 10))).toEqual([
          d.job.id,
          c.job.id,
          a.job.id,
        ]);
        expect(await store.recentJobs({ channelId: 'C0NONE' }, 10)).toEqual([]);
      });

      it('counts instructions sent per project since a time', async () => {
        const a = await job('quota-a', T0, { projectId: 'proj-a' });
        const b = await job('quota-b', T0, { projectId: null });
        const c = await job('quota-c', T0, { projectId: 'proj-a' });
        await job('quota-d', T0, { projectId: 'proj-a' }); // never sent
        await store.claimRun(a.run.id, T0 + 10);
        await store.claimRun(b.run.id, T0 + 20);
        await store.claimRun(c.run.id, T0 + 5); // before the window
        const fu = await store.insertFollowUp(a.job.id, followUp('7.1'), T0 + 30);
        await store.claimRun(fu.run.id, T0 + 30);
        await store.apply({ jobId: a.job.id, run: { id: fu.run.id, patch: { state: 'sent' } } }, T0 + 31);
        // Two replies sent as one batch were one call.
        const batch = [];
        for (const ts of ['7.2', '7.3'])
          batch.push((await store.insertFollowUp(a.job.id, followUp(ts), T0 + 40)).run);
        for (const r of batch)
          await store.apply({ jobId: a.job.id, run: { id: r.id, patch: { state: 'ready' } } }, T0 + 40);
        expect(await store.claimReadyRuns(a.job.id, 'i-1', T0 + 41, LONG_MS)).toHaveLength(2);
        const counts = await store.instructionsSince(T0 + 10);
        expect(counts.sort((x, y) => String(x.projectId).localeCompare(String(y.projectId)))).toEqual([
          { projectId: null, count: 1 },
          { projectId: 'proj-a', count: 3 },
        ]);
      });
    });

    describe('status card updates and App Home', () => {
      const card = (jobId: number): NewOutboxItem => ({
        jobId,
        dedupeKey: null,
        payload: { type: 'update_root', channel: 'C0DOCS', ts: '1.1' },
      });

      it('sends one card update of a job at a time, and one delivery covers the earlier ones', async () => {
        const { job: j } = await job('card');
        const { job: k } = await job('card-other');
        await store.enqueue([card(j.id), card(j.id), card(k.id), card(j.id)], T0);
        const claimed = await store.claimOutbox('i-1', T0, 10, LONG_MS);
        expect(claimed.map((i) => i.jobId)).toEqual([j.id, k.id]);
        const latest = await store.latestCardUpdate(j.id);
        expect(latest).toBeGreaterThan(claimed[0]?.id ?? 0);
        await store.supersedeCardUpdates(j.id, latest ?? 0, 'i-1', T0 + 1);
        expect(await store.latestCardUpdate(j.id)).toBeUndefined();
        expect(await store.latestCardUpdate(k.id)).toBe(claimed[1]?.id);
        expect(await store.claimOutbox('i-1', T0 + 2, 10, LONG_MS)).toEqual([]);
      });

      it('leaves a card update another instance holds to that instance', async () => {
        const { job: j } = await job('card-held');
        await store.enqueue([card(j.id)], T0);
        const [held] = await store.claimOutbox('i-2', T0, 10, LONG_MS);
        await store.supersedeCardUpdates(j.id, held?.id ?? 0, 'i-1', T0 + 1);
        expect(await store.latestCardUpdate(j.id)).toBe(held?.id);
      });

      it('records the root reaction without changing the job’s change time', async () => {
        const { job: j } = await job('reaction');
        await store.setRootReaction(j.id, 'white_check_mark');
        expect(await store.getJob(j.id)).toMatchObject({ rootReaction: 'white_check_mark', updatedAt: T0 });
      });

      it('remembers who opened the App Home', async () => {
        expect(await store.homeOpened('U0ANN')).toBe(false);
        await store.recordHomeOpened('U0ANN', 'T0TEAM', T0);
        await store.recordHomeOpened('U0ANN', 'T0TEAM', T0 + 5);
        expect(await store.homeOpened('U0ANN')).toBe(true);
        expect(await store.homeOpened('U0BEN')).toBe(false);
      });
    });

    describe('outbox', () => {
      it('returns due items oldest first, up to the limit, and respects the next attempt time', async () => {
        const x = await enqueueAt(item(null, 'x', 'key-x'), T0);
        const y = await enqueueAt(item(null, 'y'), T0 + 5);
        const z = await enqueueAt(item(null, 'z'), T0 + 10);
        expect(x).toEqual<OutboxItem>({
          id: x.id,
          jobId: null,
          dedupeKey: 'key-x',
          payload: post('x'),
          attempts: 0,
          nextAttemptAt: T0,
          startedAt: null,
          deliveredAt: null,
          deadAt: null,
          lastError: null,
          claimedBy: null,
          claimedUntil: null,
          createdAt: T0,
        });

        expect(texts(await store.dueOutbox(T0 + 4, 10))).toEqual(['x']);
        expect(texts(await store.dueOutbox(T0 + 10, 10))).toEqual(['x', 'y', 'z']);
        expect(texts(await store.dueOutbox(T0 + 10, 2))).toEqual(['x', 'y']);

        await store.updateOutbox(x.id, {
          attempts: 1,
          startedAt: T0 + 11,
          nextAttemptAt: T0 + 20,
          lastError: 'ratelimited',
        });
        expect(texts(await store.dueOutbox(T0 + 19, 10))).toEqual(['y', 'z']);
        const later = await store.dueOutbox(T0 + 20, 10);
        expect(later.map((i) => i.id)).toEqual([y.id, z.id, x.id]);
        expect(later[2]).toEqual<OutboxItem>({
          ...x,
          attempts: 1,
          startedAt: T0 + 11,
          nextAttemptAt: T0 + 20,
          lastError: 'ratelimited',
        });
      });

      it('keeps payloads of every type intact', async () => {
        const payloads: StoredPayload[] = [
          post('Done: <https://github.com/example/docs/pull/7|PR #7> & more — “quoted”', '1700000000.000100'),
          { type: 'update_root', channel: 'C0DOCS', ts: '1700000000.000100' },
          { type: 'reaction', channel: 'C0DOCS', ts: '1700000000.000200', name: 'eyes' },
          { type: 'respond', responseUrl: 'https://hooks.slack.test/r/1', text: 'Private note' },
          { type: 'ephemeral', channel: 'C0DOCS', user: 'U0BOB', threadTs: null, text: 'Only you' },
        ];
        await store.enqueue(
          payloads.map((payload) => ({ jobId: null, dedupeKey: null, payload })),
          T0,
        );
        expect((await store.dueOutbox(T0, 10)).map((i) => i.payload)).toEqual(payloads);
      });

      it('holds back later items of a job until the first is delivered or dead', async () => {
        const a = await job('outbox-a');
        const b = await job('outbox-b');
        const a1 = await enqueueAt(item(a.job.id, 'a1'), T0);
        await store.enqueue([item(a.job.id, 'a2')], T0 + 1);
        await store.enqueue([item(b.job.id, 'b1')], T0 + 2);
        await store.enqueue([item(null, 'n1')], T0 + 3);
        await store.enqueue([item(a.job.id, 'a3')], T0 + 4);
        await store.enqueue([item(null, 'n2')], T0 + 5);

        expect(texts(await store.dueOutbox(T0 + 100, 10))).toEqual(['a1', 'b1', 'n1', 'n2']);

        await store.updateOutbox(a1.id, { attempts: 1, startedAt: T0 + 100, deliveredAt: T0 + 101 });
        const afterDelivery = await store.dueOutbox(T0 + 100, 10);
        expect(texts(afterDelivery)).toEqual(['a2', 'b1', 'n1', 'n2']);

        const a2 = afterDelivery[0] as OutboxItem;
        await store.updateOutbox(a2.id, { attempts: 5, deadAt: T0 + 102, lastError: 'channel_not_found' });
        expect(texts(await store.dueOutbox(T0 + 100, 10))).toEqual(['b1', 'n1', 'a3', 'n2']);
      });

      it('holds back a job’s later item even while its first waits for a retry', async () => {
        const a = await job('outbox-retry');
        const first = await enqueueAt(item(a.job.id, 'first'), T0);
        await store.enqueue([item(a.job.id, 'second')], T0 + 1);
        await store.enqueue([item(null, 'loose')], T0 + 2);
        await store.updateOutbox(first.id, {
          attempts: 1,
          nextAttemptAt: T0 + 1_000,
          lastError: 'ratelimited',
        });

        expect(texts(await store.dueOutbox(T0 + 500, 10))).toEqual(['loose']);
        expect(texts(await store.dueOutbox(T0 + 1_000, 10))).toEqual(['loose', 'first']);
      });

      it('does not let items without a job hold each other back', async () => {
        await store.enqueue([item(null, 'n1'), item(null, 'n2'), item(null, 'n3')], T0);
        expect(texts(await store.dueOutbox(T0, 10))).toEqual(['n1', 'n2', 'n3']);
      });

      it('drops delivered and dead items from the due list', async () => {
        const keep = await enqueueAt(item(null, 'keep'), T0);
        const delivered = await enqueueAt(item(null, 'delivered'), T0 + 1);
        const dead = await enqueueAt(item(null, 'dead'), T0 + 2);
        await store.updateOutbox(delivered.id, { deliveredAt: T0 + 3 });
        await store.updateOutbox(dead.id, { deadAt: T0 + 3, lastError: 'not_in_channel' });
        expect(ids(await store.dueOutbox(T0 + 10, 10))).toEqual([keep.id]);
      });

      it('nextOutboxAt is the earliest next attempt of an undelivered item', async () => {
        expect(await store.nextOutboxAt(T0)).toBeUndefined();
        const first = await enqueueAt(item(null, 'first'), T0 + 10);
        const second = await enqueueAt(item(null, 'second'), T0 + 20);
        expect(await store.nextOutboxAt(T0)).toBe(T0 + 10);

        await store.updateOutbox(first.id, { attempts: 1, nextAttemptAt: T0 + 30 });
        expect(await store.nextOutboxAt(T0)).toBe(T0 + 20);
        await store.updateOutbox(second.id, { deliveredAt: T0 + 21 });
        expect(await store.nextOutboxAt(T0)).toBe(T0 + 30);
        await store.updateOutbox(first.id, { deadAt: T0 + 31 });
        expect(await store.nextOutboxAt(T0)).toBeUndefined();
      });
    });

    describe('countActiveJobs', () => {
      it('counts jobs in phase active only', async () => {
        expect(await store.countActiveJobs()).toBe(0);
        const a = await jobWith('count-a', { phase: 'active', nextPollAt: T0 + 10 });
        await jobWith('count-b', { phase: 'active', nextPollAt: null });
        await jobWith('count-c', { phase: 'idle' });
        await jobWith('count-d', { phase: 'creating' });
        await job('count-e');
        expect(await store.countActiveJobs()).toBe(2);

        await store.apply({ jobId: a.id, job: { phase: 'idle', nextPollAt: null } }, T0 + 20);
        expect(await store.countActiveJobs()).toBe(1);
      });
    });

    describe('figures', () => {
      it('is all zero and null on an empty store', async () => {
        expect(await store.figures(T0, TIMEOUT_MS)).toEqual({
          uses: [],
          activeJobs: 0,
          earliestPollAt: null,
          outboxBacklog: 0,
          oldestUndeliveredAt: null,
          liveInstances: 0,
        });
      });

      it('reports uses per project, active jobs, the earliest poll, the undelivered outbox and live instances', async () => {
        const a = await jobWith('fig-a', { phase: 'active', nextPollAt: T0 + 50 });
        await jobWith('fig-b', { phase: 'active', nextPollAt: T0 + 20 });
        // Not active: its poll time does not count.
        await jobWith('fig-c', { phase: 'creating', nextPollAt: T0 + 1 });
        const p = await job('fig-p', T0, { projectId: 'proj-a' });
        const [aRun] = await store.getRuns(a.id);
        if (!aRun) throw new Error('no first run');
        await store.claimRun(aRun.id, T0 + 10);
        await store.claimRun(p.run.id, T0 + 5);
        await store.apply({ jobId: p.job.id, run: { id: p.run.id, patch: { state: 'sent' } } }, T0 + 6);

        const delivered = await enqueueAt(item(null, 'delivered'), T0 + 2);
        const dead = await enqueueAt(item(null, 'dead'), T0 + 3);
        await enqueueAt(item(null, 'waiting'), T0 + 4);
        const retried = await enqueueAt(item(null, 'retried'), T0 + 8);
        await store.updateOutbox(delivered.id, { deliveredAt: T0 + 9 });
        await store.updateOutbox(dead.id, { deadAt: T0 + 9, lastError: 'not_in_channel' });
        // Queued at T0 + 8; a later next attempt does not make it younger.
        await store.updateOutbox(retried.id, { attempts: 1, nextAttemptAt: T0 + 500 });

        await store.heartbeat('i-gone');
        await goQuiet(store);
        await store.heartbeat('i-live');

        const figures = await store.figures(T0, TIMEOUT_MS);
        expect(figures.uses.sort((x, y) => String(x.projectId).localeCompare(String(y.projectId)))).toEqual([
          { projectId: null, count: 1 },
          { projectId: 'proj-a', count: 1 },
        ]);
        expect({ ...figures, uses: undefined }).toEqual({
          uses: undefined,
          activeJobs: 2,
          earliestPollAt: T0 + 20,
          outboxBacklog: 2,
          oldestUndeliveredAt: T0 + 4,
          liveInstances: 1,
        });
        // Uses before the window do not count.
        expect((await store.figures(T0 + 6, TIMEOUT_MS)).uses).toEqual([{ projectId: null, count: 1 }]);
      });
    });
  });
}
