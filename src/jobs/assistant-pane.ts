import { jobTitle } from '../delivery/sessions.js';
import type { JobRecord } from '../store/types.js';
import type { JobContext } from './job-context.js';

/** Longest assistant thread title set, in characters (the pane shows one line of it). */
export const ASSISTANT_TITLE_MAX_CHARS = 100;

/** What the assistant pane shows about a job started in one of its threads. */
export interface AssistantPane {
  /** "is starting the job…" under the thread, and the instruction as the thread's title. */
  starting(job: JobRecord): Promise<void>;
  /** "is working on it…" once the agent has the job (Slack clears it when the outcome is posted). */
  working(job: JobRecord): Promise<void>;
}

/**
 * The assistant pane's status line and title. Both are courtesies that say nothing the thread
 * will not say (the status card, the outcome), so they are not queued in the outbox: a failed or
 * lost call is logged and the job goes on. Only jobs accepted in a thread Slack had reported as
 * an assistant thread get them (their privacy says `pane`; a plain direct message has no status
 * line to set), whatever has become of the thread's record since.
 */
export function createAssistantPane(ctx: Pick<JobContext, 'slack' | 'logger'>): AssistantPane {
  const { slack, logger } = ctx;

  async function show(job: JobRecord, what: { status: string; title?: string }): Promise<void> {
    if (job.privacy !== 'pane' || !job.threadTs) return;
    try {
      await slack.assistantThread({ channel: job.channelId, threadTs: job.threadTs, ...what });
    } catch (error) {
      logger.warn('could not update the assistant pane', { jobId: job.id, error });
    }
  }

  return {
    starting: (job) =>
      show(job, {
        status: 'is starting the job…',
        // Plain text: Slack shows the title as it is given, so the instruction is made readable.
        title: jobTitle(job, ASSISTANT_TITLE_MAX_CHARS),
      }),
    working: (job) => show(job, { status: 'is working on it…' }),
  };
}
