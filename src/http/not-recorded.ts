import { text } from '../blocks/messages.js';
import type { JobService } from '../jobs/job-service.js';
import type { InstructionSurface, MetricsHooks } from '../jobs/metrics-hooks.js';
import type { Logger } from '../logging/logger.js';
import type { SlackGateway } from '../slack/gateway.js';
import type { Mrkdwn } from '../slack/mrkdwn.js';
import type { TaskTracker } from '../util/tasks.js';

/*
 * An instruction the store could not record as it arrived: counted as `not_recorded`, and passed
 * on for Slack to deliver again or told to the person.
 */

/** Slack re-delivers an event whose answer was an error at most this many times. */
const SLACK_EVENT_RETRIES = 3;

/** What {@link notRecorded} reads of the listener dependencies. */
export interface NotRecordedDeps {
  logger: Logger;
  slack: Pick<SlackGateway, 'postEphemeral'>;
  /** Socket Mode acknowledges events before listeners run: Slack will not deliver them again. */
  socketMode: boolean;
  tasks: TaskTracker;
}

/**
 * An instruction from an event could not be recorded (the store failed). Over HTTP the error is
 * passed on, so Slack gets an error answer and delivers the event again; when no re-delivery
 * will come (Socket Mode acknowledges before the listener runs, or this was Slack's last retry)
 * the person is told privately instead, so nothing is lost without a word.
 */
export function notRecorded(
  deps: NotRecordedDeps,
  error: unknown,
  context: { retryNum?: number },
  /** `user` undefined: Slack did not say whose it was (a deletion), so no one can be told. */
  where: { channel: string; user: string | undefined; threadTs?: string },
  /** What the person is told (default: their instruction was not recorded). */
  note: Mrkdwn = text.notRecorded(),
): void {
  const lastChance = deps.socketMode || (context.retryNum ?? 0) >= SLACK_EVENT_RETRIES;
  deps.logger.error('could not record an instruction', { error, redeliveryExpected: !lastChance });
  if (!lastChance) throw error;
  const { user } = where;
  if (user === undefined) return;
  const taken = deps.tasks.run('say an instruction was not recorded', () =>
    deps.slack.postEphemeral({ ...where, user, text: note }),
  );
  // Nothing holds this note (the store just failed): with no slot free, the log is its only trace.
  if (!taken) deps.logger.error('no room to tell the person their instruction was not recorded', where);
}

/**
 * The job service, counting every instruction it could not record as it arrived (the store
 * failed): the listeners then tell the person, or let Slack deliver the event again, and each
 * such attempt counts once as `not_recorded`.
 */
export function countNotRecorded(jobs: JobService, metrics: Pick<MetricsHooks, 'instruction'>): JobService {
  const counted =
    <A extends unknown[], R>(surface: InstructionSurface, accept: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await accept(...args);
      } catch (error) {
        metrics.instruction(surface, 'not_recorded');
        throw error;
      }
    };
  return {
    ...jobs,
    acceptCommand: counted('command', (request) => jobs.acceptCommand(request)),
    acceptMention: counted('mention', (request) => jobs.acceptMention(request)),
    acceptDirect: counted('direct', (request) => jobs.acceptDirect(request)),
    acceptShortcut: counted('shortcut', (request) => jobs.acceptShortcut(request)),
    acceptStep: counted('workflow', (request) => jobs.acceptStep(request)),
    acceptReply: counted('reply', (request) => jobs.acceptReply(request)),
  };
}
