import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAgentClient } from '../../src/agent/client.js';
import { getPolicy } from '../../src/agent/errors.js';
import { keys } from '../../src/delivery/outbox-registry.js';
import { leasesFor } from '../../src/jobs/job-context.js';
import { createRunOutcomes } from '../../src/jobs/outcomes.js';
import { createLogger, createRedactor } from '../../src/logging/logger.js';
import { createRequestBudget } from '../../src/poller/budget.js';
import {
  createPoller,
  failureBackoff,
  POLL_DENSE_SHARE,
  POLL_REFUSALS_BEFORE_NOTICE,
  type Poller,
} from '../../src/poller/poller.js';
import { RUN_WINDOW_MIN_RUNS } from '../../src/poller/run-window.js';
import type { JobRecord } from '../../src/store/types.js';
import { type AgentStandIn, API_KEY, PROJECT_ID, startAgentStandIn } from '../helpers/agent-stand-in.js';
import { waitFor } from '../helpers/http.js';
import { CHANNEL, createJobWorld, INSTANCE, type JobWorld, T0 } from '../helpers/job-world.js';

const INTERVAL = 1_000;

let agent: AgentStandIn;
let world: JobWorld;
let poller: Poller;
let agentLines: string[];
/** Rounds of the loop so far: each claims what is due. */
let rounds: number;

// One stand-in per file: compiling its OpenAPI schemas is the slow part. Each test empties it.
beforeAll(async () => {
  agent = await startAgentStandIn();
});
afterAll(() => agent.close());

beforeEach(async () => {
  agent.jobs.clear();
  agent.requests.length = 0;
  world = createJobWorld({ POLL_INTERVAL_MS: String(INTERVAL), POLL_MAX_AGE_MS: String(3_600_000) });
  agentLines = [];
  rounds = 0;
  const store = world.store;
  const client = createAgentClient({
    baseUrl: agent.url,
    apiKey: API_KEY,
    projectId: PROJECT_ID,
    timeoutMs: 2_000,
    logger: createLogger({ level: 'debug', secrets: [API_KEY], write: (l) => agentLines.push(l) }),
    redact: createRedactor([API_KEY]),
    // The poller's own schedule is what is tested: the client tries each GET once.
    policies: { get: { ...getPolicy, retries: 0 } },
  });
  poller = createPoller({
    store: {
      ...store,
      claimDueJobs: (...args) => {
        rounds++;
        return store.claimDueJobs(...args);
      },
    },
    instanceId: INSTANCE,
    agentFor: () => client,
    outcomes: createRunOutcomes({ ...world.ctx, belowOutcome: () => [] }),
    logger: world.deps.logger,
    settings: world.config.poll,
    lease: leasesFor(world.config.agent.timeoutMs).agentRead,
    budget: createRequestBudget({ rate: () => 100 }),
    now: () => world.clock.at,
    // No jitter: the next poll is exactly the interval away.
    random: () => 0,
  });
});

afterEach(async () => {
  await poller.stop();
  await world.store.close();
  expect(agent.pendingFaults()).toBe(0);
  expect(agent.violations).toEqual([]);
  expect([...world.logs, ...agentLines].filter((l) => l.includes(API_KEY))).toEqual([]);
});

/** A job the agent works on (in the stand-in), due for a poll now. */
async function watchedJob(fields: Partial<JobRecord> = {}, channelId = CHANNEL): Promise<JobRecord> {
  const created = await createAgentClient({
    baseUrl: agent.url,
    apiKey: API_KEY,
    projectId: PROJECT_ID,
    timeoutMs: 2_000,
    logger: createLogger({ level: 'error', secrets: [API_KEY], write: () => undefined }),
    redact: createRedactor([API_KEY]),
  }).createJob('Document the rate limits');
  const { job } = await world.activeJob({ channelId });
  await world.store.apply(
    { jobId: job.id, job: { agentJobId: created.id, nextPollAt: world.clock.at, ...fields } },
    world.clock.at,
  );
  return world.job(job.id);
}

/** Claims the job as this instance's round does, and polls it; reschedules are written after. */
async function pollClaimed(job: JobRecord): Promise<JobRecord> {
  const claimed = await world.store.claimDueJobs(INSTANCE, world.clock.at, 10, 60_000);
  const mine = claimed.find((c) => c.id === job.id);
  if (!mine) throw new Error('job not due');
  await poller.pollOne(mine);
  // Stopping writes the reschedules waiting to be written together.
  await poller.stop();
  return world.job(job.id);
}

/**
 * Polls the job once per step, the agent answering each with that status (or as usual), and
 * counts the refused-key notices queued for its thread after each poll.
 */
async function pollThrough(job: JobRecord, steps: Array<number | 'answered'>) {
  const notices: number[] = [];
  for (const step of steps) {
    if (step !== 'answered') agent.fail('get', { status: step });
    job = await pollClaimed(job);
    notices.push(world.outboxKeys().filter((k) => k.startsWith('poll-refused:')).length);
    world.advance(job.pollIntervalMs);
  }
  return { job, notices };
}

describe('one poll of a job', () => {
  it('looks next where the project’s latest runs ended: not before the earliest of them, densely after', async () => {
    // Ten finished runs of the job's project, of 2 to 11 seconds.
    for (let i = 0; i < RUN_WINDOW_MIN_RUNS; i++) {
      const { job, run } = await world.insertJob({ triggerKey: `history-${i}` });
      const sentAt = world.clock.at - 60 * 60_000;
      await world.store.apply(
        {
          jobId: job.id,
          run: {
            id: run.id,
            patch: { state: 'sent', sentAt, outcome: 'completed_pr', outcomeAt: sentAt + (i + 2) * 1_000 },
          },
        },
        world.clock.at,
      );
    }
    const young = await pollClaimed(await watchedJob());
    expect(young.nextPollAt).toBe(T0 + 1_800);
    world.advance(1_800);
    const due = await pollClaimed(young);
    expect(due.nextPollAt).toBe(world.clock.at + Math.round(INTERVAL * POLL_DENSE_SHARE));
    expect(agent.requestsFor('get')).toHaveLength(2);
  });

  it('keeps watching a run the agent still works on, at the interval, and ends its claim', async () => {
    const job = await pollClaimed(await watchedJob());
    expect(agent.requestsFor('get')).toHaveLength(1);
    expect(job).toMatchObject({
      phase: 'active',
      agentStatus: 'active',
      pollFailures: 0,
      pollIntervalMs: INTERVAL,
      nextPollAt: T0 + INTERVAL,
      claimedBy: null,
      claimedUntil: null,
    });
    expect(world.outboxKeys()).toEqual([]);
  });

  it('records a finished run and queues its outcome post for the thread', async () => {
    const watched = await watchedJob();
    agent.complete(watched.agentJobId ?? '', 'https://github.com/acme/docs/pull/7');
    const job = await pollClaimed(watched);
    expect(job).toMatchObject({
      phase: 'idle',
      lastOutcome: 'completed_pr',
      nextPollAt: null,
      claimedBy: null,
    });
    expect(job.prLink).toBe('https://github.com/acme/docs/pull/7');
    expect(world.outboxKeys()).toContain(keys.outcome({ jobId: job.id, runSeq: 1 }));
    const post = world.outbox().find((r) => r.key === keys.outcome({ jobId: job.id, runSeq: 1 }));
    expect(post?.payload).toMatchObject({ type: 'post', channel: 'C0TEST', threadTs: '1700000000.000001' });
    expect(JSON.stringify(post?.payload)).toContain('https://github.com/acme/docs/pull/7');
  });

  it('tells the thread the job is gone when the agent API no longer has it', async () => {
    const watched = await watchedJob();
    agent.remove(watched.agentJobId ?? '');
    const job = await pollClaimed(watched);
    expect(job).toMatchObject({ phase: 'gone', lastOutcome: 'gone', claimedBy: null });
    expect(world.outboxKeys()).toContain(keys.outcome({ jobId: job.id, runSeq: 1 }));
  });

  it('stops watching a run older than the age limit, without asking the agent', async () => {
    const watched = await watchedJob({ runStartedAt: T0 - 3_600_001 });
    const job = await pollClaimed(watched);
    expect(agent.requestsFor('get')).toEqual([]);
    expect(job).toMatchObject({ phase: 'idle', lastOutcome: 'stopped_watching', claimedBy: null });
  });

  it('keeps watching a status it does not know, and says so', async () => {
    const watched = await watchedJob();
    agent.setStatus(watched.agentJobId ?? '', 'paused');
    const job = await pollClaimed(watched);
    expect(job).toMatchObject({ phase: 'active', agentStatus: 'paused', nextPollAt: T0 + INTERVAL });
    expect(world.logs.filter((l) => l.includes('a status this bot does not know'))).toHaveLength(1);
  });

  it('backs off per failed poll, doubling, and is back to the interval after a good one', async () => {
    const watched = await watchedJob();
    agent.fail('get', { status: 503 }, { status: 500 });
    let job = await pollClaimed(watched);
    expect(job).toMatchObject({ phase: 'active', pollFailures: 1, claimedBy: null });
    expect(job.pollIntervalMs).toBe(failureBackoff(1, INTERVAL, world.config.poll.maxIntervalMs));
    expect(job.nextPollAt).toBe(T0 + 2 * INTERVAL);
    expect(job.lastError).toMatch(/503/);

    world.advance(2 * INTERVAL);
    job = await pollClaimed(job);
    expect(job).toMatchObject({ pollFailures: 2, pollIntervalMs: 4 * INTERVAL });
    expect(world.logs.filter((l) => l.includes('poll failed; will retry'))).toHaveLength(2);

    world.advance(4 * INTERVAL);
    job = await pollClaimed(job);
    expect(job).toMatchObject({ pollFailures: 0, pollIntervalMs: INTERVAL, phase: 'active' });
  });

  it('tells the thread once, after a few refused polls, that the admin key needs renewing', async () => {
    const { job, notices } = await pollThrough(await watchedJob(), [401, 401, 401, 401, 401]);
    expect(notices).toEqual([0, 0, 1, 1, 1]);
    expect(job).toMatchObject({ phase: 'active', pollFailures: 5, pollRefusals: 5 });
    expect(world.logs.filter((l) => l.includes('renew DOCS_AGENT_API_KEY'))).toHaveLength(5);
  });

  it('tells the thread of refusals in a row that follow other failed polls', async () => {
    const { job, notices } = await pollThrough(await watchedJob(), [503, 503, 503, 401, 401, 401]);
    expect(notices).toEqual([0, 0, 0, 0, 0, 1]);
    expect(job).toMatchObject({ pollFailures: 6, pollRefusals: 3 });
  });

  it('starts the count of refusals again after any poll that is not refused', async () => {
    let { job, notices } = await pollThrough(await watchedJob(), [401, 401, 503, 401]);
    expect(notices).toEqual([0, 0, 0, 0]);
    expect(job).toMatchObject({ pollFailures: 4, pollRefusals: 1 });
    // An answered poll starts it again too.
    ({ job, notices } = await pollThrough(job, [401, 'answered', 401, 401]));
    expect(notices).toEqual([0, 0, 0, 0]);
    expect(job).toMatchObject({ pollFailures: 2, pollRefusals: 2 });
  });

  it('tells the thread once per run, however many streaks of refusals it has', async () => {
    let { job } = await pollThrough(await watchedJob(), [401, 401, 401, 'answered']);
    expect(job).toMatchObject({ pollFailures: 0, pollRefusals: 0 });
    ({ job } = await pollThrough(job, [401, 401, 401]));
    expect(job.pollRefusals).toBe(POLL_REFUSALS_BEFORE_NOTICE);
    expect(world.outboxKeys().filter((k) => k.startsWith('poll-refused:'))).toHaveLength(1);
  });

  it('ends the claim of a job not yet given to the agent, without polling it', async () => {
    const watched = await watchedJob({ agentJobId: null });
    const job = await pollClaimed(watched);
    expect(agent.requestsFor('get')).toEqual([]);
    expect(job).toMatchObject({ phase: 'active', claimedBy: null });
  });

  it('does not write a reschedule over a job that moved on meanwhile, and still ends the claim', async () => {
    const watched = await watchedJob();
    const [claimed] = await world.store.claimDueJobs(INSTANCE, world.clock.at, 10, 60_000);
    if (!claimed) throw new Error('job not due');
    await poller.pollOne(claimed);
    // A follow-up started a new run before the reschedule was written.
    await world.store.apply({ jobId: watched.id, job: { nextPollAt: T0 + 5, runCount: 2 } }, world.clock.at);
    await poller.stop();
    const job = await world.job(watched.id);
    expect(job).toMatchObject({ nextPollAt: T0 + 5, runCount: 2, claimedBy: null });
  });
});

describe('the poll loop', () => {
  it('polls the jobs that are due and no others, then rests until one falls due', async () => {
    const due = await watchedJob();
    const later = await watchedJob({ nextPollAt: T0 + 10 * INTERVAL }, 'C0OTHER');
    agent.complete(due.agentJobId ?? '', null);
    poller.start();
    await waitFor('the due job finished', async () => (await world.job(due.id)).phase === 'idle');
    await poller.stop();
    expect(agent.requestsFor('get').map((r) => r.jobId)).toEqual([due.agentJobId]);
    expect(await world.job(later.id)).toMatchObject({ phase: 'active', nextPollAt: T0 + 10 * INTERVAL });
    expect((await world.job(due.id)).lastOutcome).toBe('completed_no_changes');
  });

  it('leaves alone a job another instance holds, and polls it once that claim ended', async () => {
    const job = await watchedJob();
    expect(await world.store.claimDueJobs('instance-other', world.clock.at, 10, 60_000)).toHaveLength(1);
    poller.start();
    await waitFor('a round', async () => rounds === 1);
    poller.kick();
    await waitFor('another round', async () => rounds === 2);
    expect(agent.requestsFor('get')).toEqual([]);
    await world.store.releaseJob(job.id, 'instance-other');
    poller.kick();
    await waitFor('polled once free', async () => agent.requestsFor('get').length === 1);
    await poller.stop();
    expect(await world.job(job.id)).toMatchObject({ claimedBy: null, nextPollAt: T0 + INTERVAL });
  });

  it('stops cleanly: the poll in flight finishes and is recorded, and nothing is polled after', async () => {
    const job = await watchedJob();
    agent.fail('get', { delayMs: 50 });
    poller.start();
    await waitFor('a poll in flight', async () => agent.requestsFor('get').length === 1);
    await poller.stop();
    expect(await world.job(job.id)).toMatchObject({
      claimedBy: null,
      nextPollAt: T0 + INTERVAL,
      agentStatus: 'active',
    });
    const before = rounds;
    world.advance(10 * INTERVAL);
    poller.kick();
    // A kick schedules a round on a zero timer; one queued after it runs later.
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(rounds).toBe(before);
    expect(agent.requestsFor('get')).toHaveLength(1);
  });
});
