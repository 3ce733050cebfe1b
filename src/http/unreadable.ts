import type { z } from 'zod';
import type { Logger } from '../logging/logger.js';

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
