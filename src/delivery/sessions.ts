import { pullRequestEnded } from '../blocks/pull-requests.js';
import { type JobPhase, NO_WAY_ON, STILL_STARTING } from '../domain/phases.js';
import type { Logger } from '../logging/logger.js';
import type { SlackCaller } from '../slack/caller.js';
import { mayPassLater, SlackCallError } from '../slack/caller.js';
import { mrkdwnToPlain, truncateText } from '../slack/mrkdwn.js';
import type { JobRecord, JobsStore, PullRequestRecord } from '../store/types.js';
import { BoundedCache } from '../util/lru.js';

/** Longest session title Slack takes (`agents.sessions.setStatus`). */
export const SESSION_TITLE_MAX_CHARS = 200;

/** Longest title given to a job's session: Slack lists it in one line beside others. */
export const SESSION_TITLE_CHARS = Math.min(80, SESSION_TITLE_MAX_CHARS);

/** How many threads whose initiator Slack refused are remembered, and for how long (ms). */
const WITHOUT_INITIATOR = { threads: 1_000, ttlMs: 24 * 60 * 60_000 } as const;

/**
 * Shows a job's state as its thread's agent session. Called with every status card update, which
 * is queued in the same store write as each change of the job and delivered one at a time per
 * job: the session follows the job exactly as the card does, a restart resumes what was queued,
 * and the status is read from the job when delivered, so it is never older than the card. A
 * refusal that may pass (rate limit, Slack down) fails the update, which is retried; a refusal
 * that will not (the app is not declared an agent in this workspace, the thread is gone) is
 * warned about once per reason and the card goes on without it.
 *
 * Slack takes as a session's initiator only a member of the channel: a job started for someone
 * who is not (a workflow's or a shortcut's person) has its session made without an initiator,
 * asked again once when Slack refuses the initiator. The session then shows its status and stop
 * button as any other; Slack just does not list it for the requester. The thread is remembered, so
 * its later statuses (Slack reads the initiator only when it makes the session) go without one.
 */
export function createSessionSync({
  sessions,
  store,
  logger,
}: {
  sessions: AgentSessions;
  store: Pick<JobsStore, 'setSessionStatus'>;
  logger: Logger;
}) {
  const warned = new Set<string>();
  const withoutInitiator = new BoundedCache<true>(WITHOUT_INITIATOR.threads, WITHOUT_INITIATOR.ttlMs);

  async function setStatus(job: JobRecord, args: Parameters<AgentSessions['setStatus']>[0]) {
    const thread = `${args.channel}:${args.threadTs}`;
    const { initiator, ...rest } = args;
    if (!initiator || withoutInitiator.get(thread)) return sessions.setStatus(rest);
    try {
      await sessions.setStatus(args);
    } catch (error) {
      const refused =
        error instanceof SlackCallError && error.isPlatformError && mayRefuseInitiator(error.code);
      if (!refused) throw error;
      withoutInitiator.set(thread, true);
      await sessions.setStatus(rest);
      if (warned.has(`initiator:${error.code}`)) return;
      warned.add(`initiator:${error.code}`);
      logger.info('Slack refused the requester as the agent session’s initiator; made it without one', {
        jobId: job.id,
        code: error.code,
      });
    }
  }

  /**
   * Shows the job's status as its thread's session; true when the session shows it (Slack took
   * this status, now or before), false when the job has no session Slack shows (no thread yet, or
   * Slack refused the session for good).
   */
  return async function syncSession(job: JobRecord, pullRequest?: PullRequestRecord): Promise<boolean> {
    const status = sessionStatusOf(job, pullRequest);
    if (status === null || !job.threadTs) return false;
    // Shown already: Slack limits this method like the card's edits, so an unchanged status costs no call.
    if (status === job.sessionStatus) return true;
    if (job.sessionStatus === refusedRecord(status)) return false;
    // Seen only in the job's own conversation and by the person who asked (Slack lists sessions
    // for their initiator): the audience the instruction was written for (domain/privacy.ts).
    const title = jobTitle(job, SESSION_TITLE_CHARS);
    try {
      await setStatus(job, {
        channel: job.channelId,
        threadTs: job.threadTs,
        status,
        ...(title ? { title } : {}),
        initiator: job.requesterId,
      });
    } catch (error) {
      if (!(error instanceof SlackCallError) || mayPassLater(error)) throw error;
      if (!warned.has(error.code)) {
        warned.add(error.code);
        logger.warn('Slack refused the agent session status; cards go on without it', {
          jobId: job.id,
          code: error.code,
        });
      }
      // Refused for good is recorded as such: asked again only for another status, and meanwhile
      // the thread's emoji shows the job's progress instead.
      await store.setSessionStatus(job.id, refusedRecord(status));
      return false;
    }
    await store.setSessionStatus(job.id, status);
    return true;
  };
}

/** What is recorded of a status Slack refused for good (`jobs.session_status`): not a status shown. */
const refusedRecord = (status: SessionStatus) => `refused:${status}`;

/**
 * A job's instruction as a one-line plain-text title (the assistant pane's thread, the agent
 * session): Slack shows titles as given, so mentions and links are made readable, whitespace
 * and control characters collapse to single spaces, and the length is bounded. Nothing once the
 * instruction was erased by retention.
 */
export function jobTitle(job: { instruction: string; erasedAt: number | null }, max: number): string {
  if (job.erasedAt !== null) return '';
  const line = mrkdwnToPlain(job.instruction)
    .replace(/[\s\p{Cc}]+/gu, ' ')
    .trim();
  return truncateText(line, max);
}

/**
 * Slack's answers that may refuse the session's initiator rather than the session. Slack documents
 * `initiator_user_id` as "a member of the channel" without naming the error a non-member gets, so
 * the codes Slack gives for a person who is not in, or not found in, a conversation elsewhere are
 * taken: `user_not_in_channel` (chat.postEphemeral's word for it), `invalid_initiator`,
 * `invalid_initiator_user_id`, `initiator_not_in_channel`, `user_not_found`, `invalid_user`, and
 * `not_in_channel`. The last may instead mean the bot is not in the channel: then the call without
 * an initiator is refused the same way, for one more call.
 */
const INITIATOR_REFUSED: ReadonlySet<string> = new Set([
  'user_not_in_channel',
  'invalid_initiator',
  'invalid_initiator_user_id',
  'initiator_not_in_channel',
  'user_not_found',
  'invalid_user',
  'not_in_channel',
]);

/** Whether Slack's error `code` may be a refusal of `initiator_user_id` (see {@link INITIATOR_REFUSED}). */
export const mayRefuseInitiator = (code: string): boolean => INITIATOR_REFUSED.has(code);

/**
 * Slack's agent sessions (`agents.sessions.setStatus`): a thread's status, title and initiator.
 * The title is set once, when the session is made; it is never renamed (`agents.sessions.rename`).
 */
export interface AgentSessions {
  /**
   * Sets the thread's session status, creating the session if need be; `title` and `initiator`
   * are only used when it is created.
   */
  setStatus(args: {
    channel: string;
    threadTs: string;
    status: SessionStatus;
    title?: string;
    initiator?: string;
  }): Promise<void>;
}

/** Agent sessions through the one caller, which masks the title as every text the bot sends. */
export function createAgentSessions(caller: SlackCaller): AgentSessions {
  return {
    async setStatus({ channel, threadTs, status, title, initiator }) {
      const args = {
        channel_id: channel,
        thread_ts: threadTs,
        status,
        ...(title ? { title } : {}),
        ...(initiator ? { initiator_user_id: initiator } : {}),
      };
      await caller.call('agents.sessions.setStatus', args, (client, masked) =>
        client.agents.sessions.setStatus(masked),
      );
    },
  };
}

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
export function sessionStatusOf(
  job: {
    phase: JobPhase;
    threadTs: string | null;
    runCount: number;
    stoppedRun: number | null;
    lastOutcome: string | null;
  },
  pullRequest?: PullRequestRecord,
): SessionStatus | null {
  if (!job.threadTs || job.phase === 'retried') return null;
  // Someone pressed stop on this run: it goes on (the agent API cannot cancel it), unshown.
  if (STILL_STARTING.has(job.phase) || job.phase === 'active')
    return isStopped(job.stoppedRun, currentRun(job)) ? 'active' : 'processing';
  if (NO_WAY_ON.has(job.phase)) return 'closed';
  // Its pull request was merged or closed: the work it asked for is over (a follow-up opens it again).
  if (pullRequestEnded(pullRequest)) return 'closed';
  return job.lastOutcome !== null && CLOSING_OUTCOMES.has(job.lastOutcome) ? 'closed' : 'active';
}
