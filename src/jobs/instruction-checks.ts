import type { AccessDecision, AccessPolicy } from '../access/access-policy.js';
import { text } from '../blocks/messages.js';
import { type InstructionRefusal, refusalText } from '../blocks/refusal-texts.js';
import { type PrivateTarget, privateNote } from '../delivery/kinds/private-note.js';
import { keys } from '../delivery/outbox-registry.js';
import type { Logger } from '../logging/logger.js';
import type { Mrkdwn } from '../slack/mrkdwn.js';
import type { JobRecord } from '../store/types.js';
import { backoffMs, withTimeout } from '../util/loop.js';
import type { JobContext, OutboxWrites } from './job-context.js';
import type { InstructionSurface } from './metrics-hooks.js';

/**
 * An instruction refused: `said`, the words its author is told in the chat; `why`, the reason, for
 * a surface that words it for another reader (a Workflow Builder step's builder).
 */
export interface Refusal {
  said: Mrkdwn;
  why: InstructionRefusal;
}

/** The checks an instruction passes before it goes to the agent: a new job's, or a reply's. */
export interface InstructionChecks {
  /**
   * Checks length and access, and counts the run against the hourly limits; returns the refusal
   * to give, `unverified` when Slack could not say who the author is (it waits for verification), or undefined when it may go.
   */
  refusal(
    runId: number,
    prompt: string,
    /**
     * `contextChannelId`: for a job asked for in the assistant pane, the channel the pane was
     * beside when it was accepted (the job's record), whose allow-list applies too.
     */
    who: { teamId: string | undefined; channelId: string; userId: string; contextChannelId: string | null },
    surface: InstructionSurface,
  ): Promise<Refusal | 'unverified' | undefined>;
  /**
   * Keeps an instruction whose author Slack could not confirm, to be checked again; once it has
   * waited too long, the refusal to give instead (undefined while it waits).
   */
  waitOrGiveUp(waiting: VerificationWait, surface: InstructionSurface): Promise<Refusal | undefined>;
}

export function createInstructionChecks(
  ctx: Pick<JobContext, 'access' | 'logger' | 'metrics' | 'settings'>,
  verification: Pick<VerificationWaits, 'wait'>,
): InstructionChecks {
  const { metrics, logger } = ctx;
  return {
    async refusal(runId, prompt, who, surface) {
      if (prompt.length > ctx.settings.maxPromptChars) {
        metrics.instruction(surface, 'refused', 'too_long');
        const max = ctx.settings.maxPromptChars;
        return {
          said: text.promptTooLong(prompt.length, max),
          why: { reason: 'too_long', length: prompt.length, max },
        };
      }
      // The channel recorded with the job, not the one the pane is beside now: the job runs on
      // that channel's project, so that is the channel it is checked against.
      const checked = await ctx.access.check({ ...who, contextChannelId: who.contextChannelId ?? undefined });
      const decision = checked.allowed ? await ctx.access.reserve(runId) : checked;
      if (decision.allowed) return undefined;
      // Slack could not say who the author is: nothing goes to the agent until it can (counted
      // once it is sent or refused).
      if (decision.reason === 'unverified') return 'unverified';
      metrics.instruction(surface, 'refused', decision.reason);
      logger.info('instruction refused', {
        reason: decision.reason,
        user: who.userId,
        channel: who.channelId,
      });
      return { said: refusalText(decision), why: decision };
    },

    async waitOrGiveUp(waiting, surface) {
      if (await verification.wait(waiting)) return undefined;
      metrics.instruction(surface, 'refused', 'unverified');
      return { said: text.verificationTimedOut(), why: { reason: 'held_too_long' } };
    },
  };
}

/**
 * Whether a person may instruct the agent where a job was asked, for a click or a press on it
 * ("Try again", stop) that Slack wants answered within 3 seconds. In the assistant pane, "where"
 * is the channel recorded with the job (the one its project comes from), not wherever the pane
 * is now. Fails closed (`unverified`) when Slack cannot say within `ms`.
 */
export async function accessWhereAsked(
  access: Pick<AccessPolicy, 'check'>,
  job: Pick<JobRecord, 'channelId' | 'contextChannelId'>,
  who: { userId: string; teamId: string | undefined },
  ms: number,
): Promise<AccessDecision> {
  const decision = await withTimeout(
    access.check({
      teamId: who.teamId,
      channelId: job.channelId,
      userId: who.userId,
      contextChannelId: job.contextChannelId ?? undefined,
    }),
    ms,
  ).catch(() => undefined);
  return decision ?? { allowed: false, reason: 'unverified' };
}

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
