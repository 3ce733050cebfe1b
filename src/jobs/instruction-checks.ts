import type { AccessDecision, AccessPolicy } from '../access/access-policy.js';
import { text } from '../blocks/messages.js';
import type { InstructionRefusal } from '../blocks/refusal-texts.js';
import { refusalText } from '../blocks/refusal-texts.js';
import type { Mrkdwn } from '../slack/mrkdwn.js';
import type { JobRecord } from '../store/types.js';
import { withTimeout } from '../util/waits.js';
import type { JobContext } from './job-context.js';
import type { InstructionSurface } from './metrics-hooks.js';
import type { VerificationWait, VerificationWaits } from './verification-waits.js';

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
