import type { AgentClient } from '../agent/client.js';
import { AgentNotFoundError, AgentUnauthorizedError } from '../agent/errors.js';
import { isTerminal } from '../agent/schema.js';
import type { Lease } from '../cluster/membership.js';
import type { Config } from '../config/config.js';
import { outcomeOf } from '../jobs/agent-outcomes.js';
import type { RunOutcomes } from '../jobs/outcomes.js';
import type { Logger } from '../logging/logger.js';
import type { Change, ClusterStore, JobRecord, JobsStore, RunLengthsStore } from '../store/types.js';
import { backoffMs, createLoop, type Loop } from '../util/loop.js';
import type { YieldGate } from '../util/yield-gate.js';
import type { RequestBudget } from './budget.js';
import { createRunWindows, type RunWindow } from './run-window.js';

export interface PollerOptions {
  store: Pick<JobsStore, 'applyAll' | 'nextDueAt'> &
    Pick<ClusterStore, 'claimDueJobs' | 'releaseJob'> &
    Pick<RunLengthsStore, 'runLengths'>;
  /** This process's instance id, under which it claims the jobs it polls. */
  instanceId: string;
  /** The agent API client of a documentation project (null: the default project). */
  agentFor: (projectId: string | null) => AgentClient;
  /** Where what the poller observes is recorded: a run's outcome, or that it may not poll. */
  outcomes: RunOutcomes;
  logger: Logger;
  /** Intervals, backoff, the age limit and how many polls run at once (`POLL_*`). */
  settings: Omit<Config['poll'], 'maxRps'>;
  /**
   * How long a poll claim holds off other instances: one poll with all its retries (see
   * `cluster/membership.ts`). A claim of an instance the store no longer hears from is released sooner.
   */
  lease: Lease;
  /** Paces the GETs; its rate says how many polls to claim at once. */
  budget: RequestBudget;
  /** What each round waits for first: Slack's requests go before it. Default: nothing. */
  gate?: YieldGate;
  now?: () => number;
  random?: () => number;
}

/** Share of its age that an old run waits between polls: it is reported at most a tenth late. */
export const POLL_AGE_SHARE = 0.1;
/** Consecutive refused polls (401/403) before the thread is told. */
export const POLL_REFUSALS_BEFORE_NOTICE = 3;
/**
 * Largest share by which each interval is shortened at random, so jobs started together (or
 * after a restart) drift apart. Never lengthened: no run waits longer than its interval.
 */
export const POLL_JITTER = 0.1;
/** Share of the poll interval between polls while a run is as old as the project's runs usually are when they end. */
export const POLL_DENSE_SHARE = 0.85;
/**
 * Most poll intervals a young run waits before the first of its project's runs usually ends: a
 * run that fails fast is still reported within a minute or so, and is learnt from.
 */
export const POLL_EARLY_INTERVALS = 6;

/**
 * Interval before the next poll of a healthy run of the given age. Before the earliest of its
 * project's latest runs ended (`window`), none until the run is that old (at most
 * {@link POLL_EARLY_INTERVALS} intervals); from there a little under `intervalMs` until nearly all
 * of them ended, or the run is `backoffAfterMs` old. Otherwise `intervalMs` until the run is `backoffAfterMs`
 * old (most runs finish by then, and are reported promptly), then a tenth of its age, capped at
 * `maxIntervalMs`. Runs that go on for hours are where fixed polling spends most of its requests,
 * and a tenth of a long wait is late by little. No outcome is seen more than `maxIntervalMs` late.
 */
export function pollInterval(
  ageMs: number,
  intervalMs: number,
  backoffAfterMs: number,
  maxIntervalMs: number,
  window?: RunWindow,
): number {
  const dense = Math.round(intervalMs * POLL_DENSE_SHARE);
  if (window && ageMs < window.fromMs) {
    const early = Math.min(maxIntervalMs, intervalMs * POLL_EARLY_INTERVALS);
    return Math.max(dense, Math.min(early, window.fromMs - ageMs));
  }
  // Never denser than before past the age at which a run backs off: a project whose runs take
  // long is not polled every few seconds for hours.
  if (window && ageMs < Math.min(window.untilMs, backoffAfterMs)) return dense;
  if (ageMs < backoffAfterMs) return intervalMs;
  return Math.min(maxIntervalMs, Math.max(intervalMs, Math.round(ageMs * POLL_AGE_SHARE)));
}

/** Interval after `failures` consecutive failed polls: doubles from `intervalMs` up to the cap. */
export function failureBackoff(failures: number, intervalMs: number, maxIntervalMs: number): number {
  return backoffMs(intervalMs, failures + 1, maxIntervalMs);
}

/** How a poll went: answered, failed, or refused with the admin key (a failure too). */
type PollResult = 'answered' | 'failed' | 'refused';

/**
 * Consecutive refused polls once this poll is counted: only a refusal adds one, and any other
 * poll (answered, or failed another way, such as a 503) starts the count again.
 */
function refusalsAfter(job: JobRecord, result: PollResult): number {
  return result === 'refused' ? job.pollRefusals + 1 : 0;
}

/** Reschedules are written together, at most this long after the poll, in milliseconds. */
export const RESCHEDULE_FLUSH_MS = 20;
/** …or as soon as this many are waiting. */
export const RESCHEDULE_BATCH = 200;

export interface Poller extends Loop {
  /** Polls one job now (what the loop does for each job it claimed). Exposed for tests. */
  pollOne(job: JobRecord): Promise<void>;
}

/**
 * Watches active jobs: picks the due ones by the indexed next-poll time, polls at most
 * `concurrency` at once, backs off per job, and hands terminal outcomes to the job service.
 */
export function createPoller(options: PollerOptions): Poller {
  const { store, agentFor, outcomes, logger } = options;
  const settings = options.settings;
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const inFlight = new Set<number>();
  const windows = createRunWindows({ store, logger, now });

  const jitter = (ms: number) => Math.round(ms * (1 - POLL_JITTER * random()));

  // Write-behind for reschedules: one commit for many polls. Losing one to a crash is harmless
  // (the job is polled again sooner, and a dead instance's claims are released).
  let waiting: Change[] = [];
  let flushTimer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> = Promise.resolve();
  function flush(): Promise<void> {
    if (flushTimer) clearTimeout(flushTimer);
    flushTimer = undefined;
    const batch = waiting;
    waiting = [];
    if (batch.length === 0) return flushing;
    // A reschedule whose job moved on (a follow-up started a new run meanwhile) is not written:
    // the new run's schedule stands. Its claim is ended all the same, as when the write fails.
    const release = (changes: Change[]) =>
      Promise.all(changes.map((c) => store.releaseJob(c.jobId, options.instanceId))).then(() => undefined);
    flushing = flushing
      .then(async () => {
        try {
          const applied = await store.applyAll(batch, now());
          await release(batch.filter((_c, i) => !applied[i]));
        } catch (error) {
          logger.error('could not record poll times; those jobs are polled again', { error });
          await release(batch);
        }
      })
      .catch((error) => logger.error('could not end poll claims; they run out by themselves', { error }))
      .finally(() => loop.kick());
    return flushing;
  }
  function queueReschedule(change: Change) {
    waiting.push(change);
    if (waiting.length >= RESCHEDULE_BATCH) void flush();
    else flushTimer ??= setTimeout(() => void flush(), RESCHEDULE_FLUSH_MS);
  }

  async function reschedule(job: JobRecord, result: PollResult, extra: Partial<JobRecord> = {}) {
    const at = now();
    const failed = result !== 'answered';
    const failures = failed ? job.pollFailures + 1 : 0;
    const interval = failed
      ? failureBackoff(failures, settings.intervalMs, settings.maxIntervalMs)
      : pollInterval(
          at - (job.runStartedAt ?? at),
          settings.intervalMs,
          settings.backoffAfterMs,
          settings.maxIntervalMs,
          await windows.of(job.projectId),
        );
    // Rescheduling ends this instance's claim in the same write.
    queueReschedule({
      jobId: job.id,
      expect: { phase: job.phase, runCount: job.runCount },
      job: {
        ...extra,
        pollFailures: failures,
        pollRefusals: refusalsAfter(job, result),
        pollIntervalMs: interval,
        nextPollAt: at + jitter(interval),
        claimedBy: null,
        claimedUntil: null,
      },
    });
  }

  /** Polls a claimed job; ends the claim whatever happens. */
  async function pollOne(job: JobRecord): Promise<void> {
    let rescheduled = false;
    try {
      rescheduled = await pollClaimed(job);
    } finally {
      if (!rescheduled) await store.releaseJob(job.id, options.instanceId);
    }
  }

  /** True when the claim ended with the poll's own write: the job rescheduled, or its run finished. */
  async function pollClaimed(job: JobRecord): Promise<boolean> {
    if (!job.agentJobId) return false;
    if (job.runStartedAt !== null && now() - job.runStartedAt > settings.maxAgeMs)
      return outcomes.finishRun(job, 'stopped_watching');
    try {
      const agentJob = await agentFor(job.projectId).getJob(job.agentJobId);
      const outcome = isTerminal(agentJob.status) ? outcomeOf(agentJob) : undefined;
      if (outcome) return await outcomes.finishRun(job, outcome, agentJob);
      if (agentJob.status !== 'active') {
        logger.warn('agent job has a status this bot does not know; still watching', {
          jobId: job.id,
          status: agentJob.status,
        });
      }
      await reschedule(job, 'answered', { agentStatus: agentJob.status });
      return true;
    } catch (error) {
      if (error instanceof AgentNotFoundError) {
        return await outcomes.finishRun(job, 'gone');
      }
      const refused = error instanceof AgentUnauthorizedError;
      if (refused) {
        // Said in the thread only after a few refusals in a row (a key being rotated may flap);
        // the notice's key keeps it to once per run, whatever came between.
        if (refusalsAfter(job, 'refused') === POLL_REFUSALS_BEFORE_NOTICE)
          await outcomes.notePollRefused(job);
        logger.error('agent API refused the admin key while polling: renew DOCS_AGENT_API_KEY', {
          jobId: job.id,
          error,
        });
      } else {
        logger.warn('poll failed; will retry', { jobId: job.id, error });
      }
      await reschedule(job, refused ? 'refused' : 'failed', { lastError: String((error as Error).message) });
      return true;
    }
  }

  const loop = createLoop({
    ...(options.gate ? { gate: options.gate } : {}),
    name: 'poller',
    logger,
    idleMs: Math.max(10, Math.min(1_000, Math.round(settings.intervalMs / 4))),
    async step() {
      // A quarter second's worth of the budget at a time: claims stay short, and each batch is
      // taken fairly across channels. Claiming waits until a whole batch of slots is free, so
      // the (sorting) claim query runs a few times a second rather than once per poll.
      const batch = Math.min(settings.concurrency, Math.max(1, Math.ceil(options.budget.rate() / 4)));
      const free = settings.concurrency - inFlight.size;
      // A poll that finishes kicks the loop.
      if (free < batch) return { busy: false };
      const at = now();
      const claimed = await store.claimDueJobs(options.instanceId, at, batch, options.lease.leaseMs);
      // A claim that ran out while its poll is still going here is not polled a second time.
      const due = claimed.filter((job) => !inFlight.has(job.id));
      for (const job of due) {
        inFlight.add(job.id);
        loop.track(
          pollOne(job)
            .catch((error) => logger.error('poll crashed', { jobId: job.id, error }))
            .finally(() => {
              inFlight.delete(job.id);
              loop.kick();
            }),
        );
      }
      if (claimed.length === batch) return { busy: inFlight.size < settings.concurrency };
      // Sleep until the next job falls due rather than a fixed idle time: a poll that is late by
      // the loop's own granularity reports an outcome that much later.
      const next = await store.nextDueAt(now());
      return { busy: false, ...(next === undefined ? {} : { sleepMs: Math.max(1, next - now()) }) };
    },
  });

  return {
    ...loop,
    pollOne,
    async stop() {
      await loop.stop();
      await flush();
    },
  };
}
