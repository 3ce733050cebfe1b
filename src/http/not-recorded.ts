import type { z } from 'zod';
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
 * Records through `record`, counting a failure (the store failed) as `not_recorded` for the
 * surface the instruction arrived by: the listeners then tell the person, or let Slack deliver
 * the event again, and each such attempt counts once. The error goes on as it was.
 */
export async function recordCounted<R>(
  metrics: Pick<MetricsHooks, 'instruction'>,
  surface: InstructionSurface,
  record: () => Promise<R>,
): Promise<R> {
  try {
    return await record();
  } catch (error) {
    metrics.instruction(surface, 'not_recorded');
    throw error;
  }
}

/**
 * The job service, counting every follow-up it could not record as it arrived (see
 * {@link recordCounted}); each place a new job starts from counts its own recording.
 */
export function countNotRecorded(jobs: JobService, metrics: Pick<MetricsHooks, 'instruction'>): JobService {
  return {
    ...jobs,
    acceptReply: (request) => recordCounted(metrics, 'reply', () => jobs.acceptReply(request)),
    // Every follow-up counts as a reply, whatever carried it.
    acceptFollowUp: (request) => recordCounted(metrics, 'reply', () => jobs.acceptFollowUp(request)),
  };
}

/**
 * An event that looks meant for the bot (a person's message in a job's thread or in a direct
 * message, a mention) but does not parse: logged, never dropped without a word, so a change in
 * what Slack sends shows up. Which fields failed and how (zod's paths and issue codes) and
 * nothing of their values, which may be what a person wrote. Each listener logs only the events
 * of its own kind, so one event is logged once.
 */
export function logUnreadable(
  logger: Logger,
  /** What the event would have been: `reply`, `direct message`, `mention`. */
  what: string,
  event: Record<string, unknown>,
  error: z.ZodError,
): void {
  logger.warn('an event meant for the bot could not be read, so it was dropped', {
    what,
    type: typeof event.type === 'string' ? event.type : undefined,
    subtype: typeof event.subtype === 'string' ? event.subtype : undefined,
    fields: failedFields(error),
  });
}

/** The fields a payload failed on, and how: `path: code` each, never a value. */
export const failedFields = (error: z.ZodError): string[] =>
  error.issues.map((i) => `${i.path.join('.') || '(payload)'}: ${i.code}`);
