import { jobTitle } from '../blocks/job-title.js';
import { sessionStatusOf } from '../domain/agent-session.js';
import type { Logger } from '../logging/logger.js';
import { type AgentSessions, mayRefuseInitiator, SESSION_TITLE_MAX_CHARS } from '../slack/agent-sessions.js';
import { SlackCallError } from '../slack/slack-errors.js';
import type { JobRecord } from '../store/types.js';
import { BoundedCache } from '../util/lru.js';

/** Longest title given to a job's session: Slack lists it in one line beside others. */
export const SESSION_TITLE_CHARS = Math.min(80, SESSION_TITLE_MAX_CHARS);

/** Slack's answers that a later attempt may get past: anything else will be refused again. */
const PASSING = new Set([
  'ratelimited',
  'internal_error',
  'fatal_error',
  'service_unavailable',
  'request_timeout',
]);
const mayPass = (error: SlackCallError) => !error.isPlatformError || PASSING.has(error.code);

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
export function createSessionSync({ sessions, logger }: { sessions: AgentSessions; logger: Logger }) {
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

  return async function syncSession(job: JobRecord): Promise<void> {
    const status = sessionStatusOf(job);
    if (status === null || !job.threadTs) return;
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
      if (!(error instanceof SlackCallError) || mayPass(error)) throw error;
      if (warned.has(error.code)) return;
      warned.add(error.code);
      logger.warn('Slack refused the agent session status; cards go on without it', {
        jobId: job.id,
        code: error.code,
      });
    }
  };
}
