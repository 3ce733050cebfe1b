import type { AccessPolicy } from '../../access/access-policy.js';
import { cardUpdate } from '../../delivery/kinds/card-update.js';
import { privateNote } from '../../delivery/kinds/private-note.js';
import { threadPost } from '../../delivery/kinds/thread-post.js';
import { keys } from '../../delivery/outbox-registry.js';
import { currentRun, isStopped } from '../../delivery/sessions.js';
import { POLLED, STILL_STARTING, TAKES_FOLLOW_UPS } from '../../domain/phases.js';
import { accessWhereAsked } from '../../jobs/instruction-checks.js';
import type { OutboxWrites } from '../../jobs/job-context.js';
import type { WaitingWithdrawal } from '../../jobs/withdrawal.js';
import type { Logger } from '../../logging/logger.js';
import { isUserId } from '../../slack/ids.js';
import { joinMrkdwn, type Mrkdwn, md, userMention } from '../../slack/mrkdwn.js';
import type { JobRecord, JobsStore, RunRecord, RunsStore } from '../../store/types.js';

/**
 * How long a stop waits for the access check (users.info), in milliseconds: an event is
 * answered within 3 seconds. Past it, the stop is refused as if Slack could not say who it was.
 */
export const STOP_ACCESS_CHECK_MS = 1_500;

/** Someone pressed stop on a job's agent session (`agent_session_stopped`), already parsed. */
export interface StopRequest {
  channelId: string;
  threadTs: string;
  /** Who pressed it, and their own workspace when Slack said. */
  userId: string;
  teamId: string | undefined;
  /** The event's own ts: a re-delivery carries the same one. */
  eventTs: string;
}

/**
 * What a stop became: `stopped` (what waited was withdrawn and the session leaves processing);
 * `repeat` (that run was stopped already and nothing new waited: a re-delivery or a second
 * press); `refused` (the person may not stop the job; told privately); `ignored` (no job there).
 */
export type StopOutcome = 'stopped' | 'repeat' | 'refused' | 'ignored';

/**
 * What recording a stop works with: the job it reads, who may stop it, the withdrawal of what
 * waits (the job kernel's, shared with deletions), the outbox writes that tell the thread.
 */
export interface StopDeps {
  store: Pick<JobsStore, 'findJobByThread' | 'getJob'> & Pick<RunsStore, 'getRuns'>;
  access: Pick<AccessPolicy, 'check'>;
  jobs: Pick<WaitingWithdrawal, 'withdrawWaiting'>;
  outbox: OutboxWrites;
  logger: Logger;
  /** When the stop is recorded (ms since the epoch). Default: `Date.now`. */
  now?: () => number;
}

/** A stop whose write found the job changed (a run ended, a batch went out) reads it again. */
const ATTEMPTS = 3;

/** The requester, or someone who may instruct the agent where the job was asked. */
async function mayStop(deps: StopDeps, job: JobRecord, request: StopRequest): Promise<boolean> {
  if (request.userId === job.requesterId) return true;
  return (await accessWhereAsked(deps.access, job, request, STOP_ACCESS_CHECK_MS)).allowed;
}

async function stop(
  deps: StopDeps,
  job: JobRecord,
  request: StopRequest,
  attempt: number,
  /** Withdrawn by an earlier attempt of this stop: still to be told. */
  earlier: RunRecord[] = [],
): Promise<StopOutcome> {
  const { store, logger } = deps;
  const now = deps.now ?? Date.now;
  const withdrawn = [...earlier, ...(await deps.jobs.withdrawWaiting(job))];
  const fresh = await store.getJob(job.id);
  if (!fresh) return 'ignored';
  // A reply on its way to the agent (its call made, not answered) cannot be withdrawn: the run
  // it starts is the next one, and it is stopped too, or it would show `processing` again.
  const sending = TAKES_FOLLOW_UPS.has(fresh.phase)
    ? (await store.getRuns(fresh.id)).find((r) => r.kind === 'follow_up' && r.state === 'sending')
    : undefined;
  // The agent has (or is being given) an instruction of this job: nothing can take it back.
  const running = STILL_STARTING.has(fresh.phase) || POLLED.has(fresh.phase) || sending !== undefined;
  const run = currentRun(fresh) + (sending ? 1 : 0);
  const marked = running && isStopped(fresh.stoppedRun, run);
  if (withdrawn.length === 0 && (marked || !running)) {
    logger.info('stop with nothing left to stop', { jobId: job.id, user: request.userId });
    return 'repeat';
  }
  const post = threadPost({
    job: fresh,
    key: keys.stopped({ jobId: job.id, run, first: withdrawn[0]?.id ?? 0 }),
    kind: 'notice',
    text: stopText.stopped({ by: request.userId, withdrawn, running }),
  });
  const applied = await deps.outbox.applyQueued(
    {
      jobId: job.id,
      expect: { phase: fresh.phase, runCount: fresh.runCount },
      // Only while that reply is still on its way: one answered meanwhile is read again.
      ...(sending ? { expectRun: { id: sending.id, states: ['sending'] as const } } : {}),
      ...(running ? { job: { stoppedRun: run } } : {}),
      enqueue: [post, ...cardUpdate({ ...fresh, stoppedRun: running ? run : fresh.stoppedRun })],
    },
    now(),
  );
  if (applied) {
    logger.info('session stopped', {
      jobId: job.id,
      user: request.userId,
      withdrawn: withdrawn.length,
      running,
    });
    return 'stopped';
  }
  // The job moved on between the read and the write: what was withdrawn stays withdrawn.
  if (attempt < ATTEMPTS) return stop(deps, fresh, request, attempt + 1, withdrawn);
  return 'repeat';
}

/**
 * Withdraws everything of the job that has not reached the agent (as deleting it would), says
 * in the thread exactly what was withdrawn and that a run the agent already has will finish
 * and be posted, and moves the session out of `processing`: all queued in the store before
 * Slack is answered. Only the requester, or someone who may instruct the agent where the job
 * was asked, may stop it; anyone else is told privately. A re-delivered or second stop of the
 * same run with nothing new waiting does nothing.
 */
export async function recordStop(deps: StopDeps, request: StopRequest): Promise<StopOutcome> {
  const { store, logger } = deps;
  // Its listener parses the id; a stop from elsewhere is held to the same rule, since the
  // id is addressed (a private note) and written into the thread.
  if (!isUserId(request.userId)) {
    logger.warn('stop ignored: not a user id', { field: 'userId' });
    return 'ignored';
  }
  const job = await store.findJobByThread(request.channelId, request.threadTs);
  if (!job) return 'ignored';
  if (!(await mayStop(deps, job, request))) {
    const to = {
      channelId: job.channelId,
      userId: request.userId,
      threadTs: job.threadTs,
      responseUrl: null,
    };
    const note = stopText.notYours(job.requesterId);
    // The session is shown as it is again: Slack's client may have taken the press as done.
    await deps.outbox.enqueue(
      [
        privateNote(job.id, keys.stopRefused({ jobId: job.id, eventTs: request.eventTs }), to, note),
        ...cardUpdate(job),
      ],
      (deps.now ?? Date.now)(),
    );
    logger.info('stop refused', { jobId: job.id, user: request.userId });
    return 'refused';
  }
  return stop(deps, job, request, 1);
}

/** Something taken back by a stop before it reached the agent. */
export interface Withdrawn {
  kind: 'create' | 'follow_up';
  authorId: string;
}

/** Most withdrawn instructions named one by one; the rest are counted. */
const LISTED = 5;

const describe = (run: Withdrawn): Mrkdwn =>
  run.kind === 'create' ? md`the first instruction` : md`a reply from ${userMention(run.authorId)}`;

/**
 * What the bot says when someone presses stop on a job's session. The agent API cannot cancel
 * a run it has: the text never claims more than was done.
 */
export const stopText = {
  stopped: ({
    by,
    withdrawn,
    running,
  }: {
    by: string;
    withdrawn: readonly Withdrawn[];
    running: boolean;
  }) => {
    const listed = withdrawn.slice(0, LISTED).map(describe);
    const more = withdrawn.length - listed.length;
    const names = joinMrkdwn(more > 0 ? [...listed, md`${more} more`] : listed, md`, `);
    const taken =
      withdrawn.length > 0
        ? md`Withdrawn before it reached the docs agent: ${names}.`
        : md`Nothing was waiting to be withdrawn.`;
    const goesOn = running
      ? md`The agent already has the instruction it is working on and cannot be interrupted: it will finish, and its outcome will still be posted in this thread.`
      : md`Nothing else was running.`;
    return md`:octagonal_sign: ${userMention(by)} pressed stop. ${taken} ${goesOn}`;
  },
  notRecorded: () =>
    md`:warning: I could not record your stop just now, so what waits may still be sent to the docs agent. Please press stop again in a moment.`,
  notYours: (requesterId: string) =>
    md`:no_entry: Only ${userMention(requesterId)}, who asked for this job, or someone who may instruct the docs agent here can stop it. Nothing was stopped.`,
};
