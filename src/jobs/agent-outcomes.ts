import {
  AgentInvalidResponseError,
  AgentOutcomeUnknownError,
  AgentUnauthorizedError,
} from '../agent/errors.js';
import type { AgentJob } from '../agent/schema.js';
import { enterPhase } from '../domain/phases.js';
import type { Logger } from '../logging/logger.js';
import type { JobPatch, RunOutcome } from '../store/types.js';

/** Job fields taken from an agent job record. */
export function fromAgentJob(agentJob: AgentJob): JobPatch {
  return {
    agentStatus: agentJob.status,
    ...(agentJob.prLink ? { prLink: agentJob.prLink } : {}),
    ...(agentJob.source?.repository ? { repository: agentJob.source.repository } : {}),
    ...(agentJob.source?.ref ? { ref: agentJob.source.ref } : {}),
    ...(agentJob.model ? { model: agentJob.model } : {}),
  };
}

/** Which outcome a terminal agent job means. */
export function outcomeOf(agentJob: AgentJob): RunOutcome | undefined {
  switch (agentJob.status) {
    case 'completed':
      return agentJob.prLink ? 'completed_pr' : 'completed_no_changes';
    case 'failed':
      return 'failed';
    case 'archived':
      return 'archived';
    default:
      return undefined;
  }
}

/** The request may or may not have taken effect upstream. */
export const isUnknownOutcome = (error: unknown) =>
  error instanceof AgentOutcomeUnknownError || error instanceof AgentInvalidResponseError;
export const errorMessage = (error: unknown) => String((error as Error)?.message ?? error);

/**
 * The job's fields once the agent accepted a run: active, polled from `at` on. `from` is the
 * job's phase when the run was sent (being created, or taking a follow-up).
 */
export const startedPatch = (
  from: 'creating' | 'active' | 'idle',
  agentJob: AgentJob,
  at: number,
  pollIntervalMs: number,
): JobPatch => ({
  ...fromAgentJob(agentJob),
  ...enterPhase(from, 'active'),
  lastOutcome: null,
  runStartedAt: at,
  nextPollAt: at + pollIntervalMs,
  pollIntervalMs,
  pollFailures: 0,
  pollRefusals: 0,
  lastError: null,
});

/** Logs a failed agent API call; a refused admin key is an error someone must act on. */
export function logAgentError(logger: Logger, error: unknown, fields: Record<string, unknown>): void {
  if (error instanceof AgentUnauthorizedError) {
    logger.error('agent API refused the admin key: renew DOCS_AGENT_API_KEY', { ...fields, error });
  } else {
    logger.warn('agent API call failed', { ...fields, error });
  }
}

/** Attempts of a store write that records what the agent API already did. */
export const RECORD_ATTEMPTS = 4;

/**
 * Records what the agent API already did. Retried: giving up must never turn into "nothing was
 * sent" (a person would send it again and start a second agent). If the store stays
 * unavailable the error propagates, the row stays `creating`/`sending`, and recovery reports the
 * outcome as unknown.
 */
export async function recordAgentAnswer<T>(write: () => Promise<T>, logger: Logger): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (attempt >= RECORD_ATTEMPTS) throw error;
      logger.warn('could not record the agent API answer; retrying', { attempt, error });
      await new Promise((resolve) => setTimeout(resolve, 200 * 3 ** (attempt - 1)));
    }
  }
}
