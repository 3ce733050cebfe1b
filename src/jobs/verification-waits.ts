import { text } from '../blocks/messages.js';
import { type PrivateTarget, privateNote } from '../delivery/outbox-items.js';
import { keys } from '../delivery/outbox-registry.js';
import type { Logger } from '../logging/logger.js';
import { backoffMs } from '../util/waits.js';
import type { OutboxWrites } from './job-context.js';

/** First wait before an instruction waiting for verification is checked again, in milliseconds. */
export const VERIFICATION_FIRST_RETRY_MS = 5_000;
/** Longest wait between two checks of an instruction waiting for verification, in milliseconds. */
export const VERIFICATION_MAX_RETRY_MS = 60_000;
/** How long an instruction may wait for Slack to confirm its author before it is refused, in milliseconds. */
export const VERIFICATION_LIMIT_MS = 30 * 60_000;
/**
 * How long a Workflow Builder step's job may wait for Slack to confirm its person, in
 * milliseconds: Slack ends a step 15 minutes after it started, and the step must be answered
 * before then (its delivery may already have taken some of them). A job started after that would
 * run while the workflow shows a failure, and a builder who runs it again would get two.
 */
export const STEP_VERIFICATION_LIMIT_MS = 10 * 60_000;

/**
 * An instruction waiting for verification (Slack to confirm its author): a job waiting to start,
 * or a reply waiting to be sent. Its outbox note and key keep the older word (`held:…`).
 */
export interface VerificationWait {
  kind: 'job' | 'reply';
  id: number;
  jobId: number;
  /** When it was recorded (epoch ms): it is refused `limitMs` after. */
  since: number;
  /** How long it may wait, in milliseconds; default {@link VERIFICATION_LIMIT_MS}. */
  limitMs?: number;
  /** Who is told, privately, that it waits. */
  to: PrivateTarget;
  /** Checks it again (and sends, refuses or keeps it waiting once more). */
  recheck: () => Promise<void>;
}

export interface VerificationWaits {
  /**
   * Keeps an instruction whose author Slack could not confirm: tells the author once, and
   * checks it again later with backoff. False when it has waited too long: the caller refuses
   * it with {@link text.verificationTimedOut}.
   */
  wait(waiting: VerificationWait): Promise<boolean>;
  /** Stops the timers. What waits stays recorded; recovery or the next start checks it again. */
  stop(): void;
}

export function createVerificationWaits(deps: {
  logger: Logger;
  /** Queues the note that an instruction waits for verification, and wakes the outbox. */
  enqueue: OutboxWrites['enqueue'];
  /** Runs background work; false when no slot is free. */
  runTask: (name: string, work: () => Promise<void>) => boolean;
  firstRetryMs?: number;
  now: () => number;
}): VerificationWaits {
  const attempts = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;
  const firstRetry = deps.firstRetryMs ?? VERIFICATION_FIRST_RETRY_MS;

  /** Checks again after `ms`; with no background slot free then, waits as long again. */
  function later(recheck: () => Promise<void>, ms: number): void {
    if (stopped) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!deps.runTask('check a held instruction again', recheck)) later(recheck, ms);
    }, ms);
    timer.unref();
    timers.add(timer);
  }

  return {
    async wait(waiting) {
      const key = `${waiting.kind}:${waiting.id}`;
      if (deps.now() - waiting.since > (waiting.limitMs ?? VERIFICATION_LIMIT_MS)) {
        attempts.delete(key);
        return false;
      }
      const attempt = attempts.get(key) ?? 0;
      attempts.set(key, attempt + 1);
      // Once per instruction, also across restarts: the dedupe key names it.
      await deps.enqueue(
        [
          privateNote(
            waiting.jobId,
            keys.held({ kind: waiting.kind, id: waiting.id }),
            waiting.to,
            text.awaitingVerification(),
          ),
        ],
        deps.now(),
      );
      deps.logger.info('instruction held until Slack confirms its author', {
        kind: waiting.kind,
        id: waiting.id,
        attempt,
      });
      later(waiting.recheck, backoffMs(firstRetry, attempt + 1, VERIFICATION_MAX_RETRY_MS));
      return true;
    },
    stop() {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
}
