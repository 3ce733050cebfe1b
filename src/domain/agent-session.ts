import { type JobPhase, NO_WAY_ON, STILL_STARTING } from './phases.js';

/**
 * A job's thread as a Slack agent session (`agents.sessions.setStatus`): Slack shows a loading
 * indicator and a stop button while it is `processing`, and lists it for the person who asked.
 * The session only reports status; the status card stays the detailed view.
 */
export type SessionStatus = 'processing' | 'active' | 'suspended' | 'closed';

/** Run outcomes after which the job is no longer followed: its session is closed. */
const CLOSING_OUTCOMES: ReadonlySet<string> = new Set(['archived', 'gone', 'stopped_watching']);

/**
 * The number of the run the agent works on, or the first one while the job is being started
 * (its run count goes up once the agent takes it).
 */
export const currentRun = (job: { phase: JobPhase; runCount: number }): number =>
  STILL_STARTING.has(job.phase) ? job.runCount + 1 : job.runCount;

/**
 * Whether a stop covers `run`. A stop is recorded against the latest run the agent had or was
 * being given when it was pressed (a reply on its way may start the next one), and covers every
 * run up to it: should that reply never reach the agent, the run it has stays stopped.
 */
export const isStopped = (stoppedRun: number | null, run: number): boolean =>
  stoppedRun !== null && run <= stoppedRun;

/**
 * The session status a job's thread should show, read from the job as it is now (so a status
 * delivered late can never show an older state than the job's): `processing` while the job is
 * being started or the agent works on its latest run (unless someone pressed stop on that run),
 * `active` while it waits for a follow-up, `closed` once nothing can go on in it. Null when the
 * job has no thread of its own (not yet posted, or given up to a new job).
 */
export function sessionStatusOf(job: {
  phase: JobPhase;
  threadTs: string | null;
  runCount: number;
  stoppedRun: number | null;
  lastOutcome: string | null;
}): SessionStatus | null {
  if (!job.threadTs || job.phase === 'retried') return null;
  // Someone pressed stop on this run: it goes on (the agent API cannot cancel it), unshown.
  if (STILL_STARTING.has(job.phase) || job.phase === 'active')
    return isStopped(job.stoppedRun, currentRun(job)) ? 'active' : 'processing';
  if (NO_WAY_ON.has(job.phase)) return 'closed';
  return job.lastOutcome !== null && CLOSING_OUTCOMES.has(job.lastOutcome) ? 'closed' : 'active';
}
