/**
 * The job flows' world for unit tests: a real SQLite store in memory, the real configuration,
 * access policy, identity and user names, and fakes only for Slack and the agent API (see
 * fake-network.ts). Tests build one flow from `world.ctx` and read what it recorded back from
 * the store.
 */
import { vi } from 'vitest';
import { createAccessPolicy } from '../../src/access/access-policy.js';
import type { RenderHints } from '../../src/blocks/messages.js';
import { readConfig, secretsOf } from '../../src/config/config.js';
import type { OutboxPayload } from '../../src/delivery/outbox-registry.js';
import {
  createJobContext,
  type JobContext,
  type JobServiceDeps,
  leasesFor,
} from '../../src/jobs/job-context.js';
import { createJobService, type JobService } from '../../src/jobs/job-service.js';
import { createLogger } from '../../src/logging/logger.js';
import { createSlackCaller } from '../../src/slack/caller.js';
import { createChannelAudiences, createUserNames } from '../../src/slack/directory.js';
import { createIdentity } from '../../src/slack/identity.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { JobRecord, NewJob, RunRecord, RunState } from '../../src/store/types.js';
import { VALID_ENV } from './config.js';
import { fakeAgent, fakeSlack, fakeWebClient } from './fake-network.js';
import { insertSampleJob } from './job-record.js';

/** A fixed start time, so recorded times are exact. */
export const T0 = Date.parse('2026-09-01T12:00:00.000Z');
export const CHANNEL = 'C0TEST';
export const REQUESTER = 'U0REQUESTER';
export const INSTANCE = 'instance-test-1';
/** Who replies in a job's thread, and the message of that reply. */
export const HELPER = 'U0HELPER';
export const REPLY_TS = '1700000500.000500';

/** What a test says of a follow-up it records: its words, who wrote it, and its message. */
type FollowUpFields = { prompt?: string; authorId?: string; messageTs?: string };

export interface OutboxRow {
  jobId: number | null;
  key: string | null;
  payload: OutboxPayload;
}

/** Everything a job flow is built from, plus ways to read the store and move the clock. */
export function createJobWorld(env: Record<string, string> = {}) {
  const config = readConfig({ ...VALID_ENV, FOLLOW_UP_BATCH_MS: '0', ...env });
  const logs: string[] = [];
  const logger = createLogger({ level: 'debug', secrets: secretsOf(config), write: (l) => logs.push(l) });
  const store = openSqliteStore(':memory:');
  const slack = fakeSlack();
  const agent = fakeAgent();
  const clock = { at: T0 };
  const now = () => clock.at;
  const identity = createIdentity(
    createSlackCaller({ client: fakeWebClient(), logger, redact: (text) => text }),
    logger,
    now,
  );
  const access = createAccessPolicy({
    config: config.access,
    identity,
    slack,
    store,
    logger,
    defaultProject: config.agent.projectId,
    now,
  });
  const hints: RenderHints = {
    mode: config.followUps.mode,
    asideMarker: config.followUps.asideMarker,
    prLinkHosts: config.prLinkHosts,
  };
  /** Background work the flows started, so a test can wait for all of it. */
  const started: Promise<void>[] = [];
  const deps: JobServiceDeps = {
    store,
    instanceId: INSTANCE,
    leases: leasesFor(config.agent.timeoutMs),
    agentFor: () => agent,
    projectFor: (channelId) => config.channelProjects.get(channelId) ?? config.agent.projectId,
    settings: config,
    loops: { outbox: { kick: vi.fn() }, poller: { kick: vi.fn() } },
    names: createUserNames(slack, logger),
    hints,
    botUserId: async () => (await identity.get())?.botUserId,
    slack,
    audiences: createChannelAudiences({ slack, logger }),
    access,
    logger,
    runTask: vi.fn((_name: string, work: () => Promise<void>) => {
      started.push(work());
      return true;
    }),
    now,
  };
  const ctx: JobContext = createJobContext(deps);

  return {
    config,
    logs,
    store,
    slack,
    agent,
    access,
    identity,
    hints,
    deps,
    ctx,
    clock,
    /**
     * The job service as the app builds it (`createJobService`), on this world's dependencies
     * (`more` replaces some). Stop it after the test: its batch windows and verification waits
     * keep timers.
     */
    service(more: Partial<JobServiceDeps> = {}): JobService {
      return createJobService({ ...deps, ...more });
    },
    /** Moves the clock on by `ms`. */
    advance(ms: number) {
      clock.at += ms;
    },
    /** Waits for every background task the flows handed to `runTask` so far. */
    async background() {
      for (let i = 0; i < started.length; i++) await started[i];
    },
    /** Every outbox item queued, oldest first. */
    outbox(): OutboxRow[] {
      const rows = store.db
        .prepare('SELECT job_id AS jobId, dedupe_key AS key, payload FROM outbox ORDER BY id')
        .all() as { jobId: number | null; key: string | null; payload: string }[];
      return rows.map((r) => ({ ...r, payload: JSON.parse(r.payload) as OutboxPayload }));
    },
    /** The dedupe keys of every outbox item queued (card updates, which have none, left out). */
    outboxKeys(): string[] {
      return this.outbox().flatMap((r) => (r.key ? [r.key] : []));
    },
    /** Records a job in its first phase with its first run, as a command would. */
    async insertJob(fields: Partial<NewJob> = {}, prompt = 'Document the rate limits') {
      const { job, run } = await insertSampleJob(
        store,
        clock.at,
        {
          channelId: CHANNEL,
          requesterId: REQUESTER,
          pollIntervalMs: config.poll.intervalMs,
          owner: INSTANCE,
          ...fields,
        },
        prompt,
      );
      return { job, run };
    },
    /**
     * Records a job the agent is working on: its card posted in its thread, its first run sent,
     * polled from now on.
     */
    async activeJob(fields: Partial<NewJob> = {}) {
      const { job, run } = await this.insertJob(fields);
      await store.apply(
        {
          jobId: job.id,
          job: {
            phase: 'active',
            threadTs: '1700000000.000001',
            cardTs: '1700000000.000001',
            agentJobId: 'job_test_1',
            agentStatus: 'active',
            runStartedAt: clock.at,
            nextPollAt: clock.at + config.poll.intervalMs,
          },
          run: { id: run.id, patch: { state: 'sent', sentAt: clock.at } },
          incrementRunCount: true,
        },
        clock.at,
      );
      return { job: await this.job(job.id), run: (await store.getRuns(job.id))[0] as RunRecord };
    },
    /**
     * Records a job whose first run ended with a pull request: its outcome post, in its thread,
     * carries the feedback buttons.
     */
    async jobWithOutcome(fields: Partial<NewJob> = {}) {
      const active = await this.activeJob(fields);
      await store.apply(
        {
          jobId: active.job.id,
          run: { id: active.run.id, patch: { outcome: 'completed_pr', outcomeAt: clock.at } },
        },
        clock.at,
      );
      return active;
    },
    /**
     * Records a follow-up to `jobId` from a helper in its thread (`fields` override its words, its
     * author and its message), then leaves it in `state`: by default `pending`, not sent yet.
     */
    async insertFollowUp(jobId: number, fields: FollowUpFields = {}, state: RunState = 'pending') {
      const { run } = await store.insertFollowUp(
        jobId,
        {
          kind: 'follow_up',
          prompt: 'Also the SDK',
          authorId: HELPER,
          messageTs: REPLY_TS,
          owner: INSTANCE,
          ...fields,
        },
        clock.at,
      );
      if (state === 'pending') return run;
      await store.apply({ jobId, run: { id: run.id, patch: { state } } }, clock.at);
      return (await store.getRun(run.id)) ?? run;
    },
    /** An active job with a follow-up in its thread left in `state` (see `insertFollowUp`). */
    async activeJobWithReply(state: RunState = 'pending', fields: FollowUpFields = {}) {
      const { job } = await this.activeJob();
      return { job, run: await this.insertFollowUp(job.id, fields, state) };
    },
    /** How many jobs the store holds. */
    jobCount: () => (store.db.prepare('SELECT count(*) AS n FROM jobs').get() as { n: number }).n,
    /** How many runs (first instructions and follow-ups) the store holds. */
    runCount: () => (store.db.prepare('SELECT count(*) AS n FROM runs').get() as { n: number }).n,
    /** The job as the store holds it now. */
    async job(id: number): Promise<JobRecord> {
      const job = await store.getJob(id);
      if (!job) throw new Error(`no job ${id}`);
      return job;
    },
    async runs(jobId: number): Promise<RunRecord[]> {
      return store.getRuns(jobId);
    },
  };
}

export type JobWorld = ReturnType<typeof createJobWorld>;
