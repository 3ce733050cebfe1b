import type { RefusalReason } from '../access/access-policy.js';
import type { AgentAnswer, AgentEndpoint } from '../agent/schema.js';
import type { FeedbackValue } from '../store/feedback.js';
import type { RunOutcome } from '../store/types.js';

/**
 * Where an instruction came from. A mention inside a thread that already has a job is that
 * job's follow-up, and counts as a `reply`.
 */
export type InstructionSurface = 'command' | 'mention' | 'shortcut' | 'direct' | 'workflow' | 'reply';

/**
 * What became of an instruction:
 * - `started`: a new job the agent accepted; `sent`: a follow-up the agent accepted;
 * - `refused`: the bot would not send it (`reason` says why) and told the person;
 * - `failed`: it surely did not reach the agent (`reason`: `agent`, `slack`, `restart`);
 * - `unknown`: it may or may not have reached the agent (`reason`: `agent`, `restart`);
 * - `not_recorded`: the store could not record it when it arrived.
 */
export type InstructionResult = 'started' | 'sent' | 'refused' | 'failed' | 'unknown' | 'not_recorded';

/**
 * Why an instruction was refused, failed or has an unknown fate: the access rules' reasons,
 * `too_long`, `empty` (nothing left to send), `no_job` (a reply in a thread whose job never
 * ran or is gone); `agent` (the agent API refused it, or did not answer), `slack` (the thread
 * could not be started in Slack), `restart` (the process stopped while handling it).
 */
export type InstructionReason =
  | RefusalReason
  | 'too_long'
  | 'empty'
  | 'no_job'
  | 'agent'
  | 'slack'
  | 'restart';

/**
 * What the app reports as it works, for the metrics endpoint. The parts of the app call these
 * hooks and never see the metrics library; {@link noMetrics} stands in when metrics are off.
 */
export interface MetricsHooks {
  /** `count` instructions from `surface` reached `result` (replies sent together are several). */
  instruction(
    surface: InstructionSurface,
    result: InstructionResult,
    reason?: InstructionReason,
    count?: number,
  ): void;
  /** A run (with any follow-ups merged into it) ended with `outcome`, and its post was queued. */
  runFinished(outcome: RunOutcome): void;
  /** One agent API request (each attempt, retries included) ended after `seconds`. */
  agentRequest(endpoint: AgentEndpoint, answer: AgentAnswer, seconds: number): void;
  /** A Slack Web API call (or a `response_url` post) failed with `code`. */
  slackError(method: string, code: string): void;
  /** Slack refused an outbox item for good: the message is given up. */
  outboxGivenUp(): void;
  /**
   * Someone gave feedback on an outcome (a new vote, or a changed one); `withReason`: a
   * thumbs-down that said what to fix (a new or changed reason).
   */
  feedback(value: FeedbackValue, withReason?: boolean): void;
  /**
   * A pull request followed: opened (found on a run's outcome), merged or closed (seen so on its
   * host); a merged one's time from being opened, in seconds, as `mergedAfter`.
   */
  pullRequest(state: 'opened' | 'merged' | 'closed', mergedAfterSeconds?: number): void;
  /**
   * This host's clock, measured at a heartbeat against the store's: how far it is behind
   * (positive) or ahead (negative) of the store, in seconds.
   */
  clockOffset(seconds: number): void;
}

/** Hooks that do nothing: metrics off, or a test that does not look at them. */
export const noMetrics: MetricsHooks = {
  instruction() {},
  runFinished() {},
  agentRequest() {},
  slackError() {},
  outboxGivenUp() {},
  feedback() {},
  pullRequest() {},
  clockOffset() {},
};
