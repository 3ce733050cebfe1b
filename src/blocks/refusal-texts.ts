import type { RefusalReason } from '../access/access-policy.js';
import {
  AgentBadRequestError,
  AgentInvalidResponseError,
  AgentNotFoundError,
  AgentOutcomeUnknownError,
  AgentRateLimitedError,
  AgentUnauthorizedError,
  AgentUnavailableError,
} from '../agent/errors.js';
import { codeSpan, type Mrkdwn, md, slackDate, truncateText } from '../slack/mrkdwn.js';

/**
 * Why something the person asked for was not done: the agent API's refusals and the access
 * policy's. Each names what was not done and what to do next.
 */

/** Why an instruction did not reach the agent, in words for the person who gave it. */
export function agentErrorText(error: unknown, what: 'job' | 'follow-up'): Mrkdwn {
  const nothingSent = what === 'job' ? md`No job was started.` : md`This reply was not sent to the agent.`;
  if (error instanceof AgentRateLimitedError) {
    const when = error.resetAt
      ? md`You can try again ${slackDate(error.resetAt, '{time}')}.`
      : md`Try again later in the hour.`;
    return md`:hourglass: The documentation project has reached its hourly limit of agent instructions. ${nothingSent} ${when}`;
  }
  if (error instanceof AgentUnauthorizedError) {
    return md`:lock: The docs agent API refused this bot's API key (HTTP ${error.status ?? 401}). ${nothingSent} Please ask a workspace admin to renew the bot's admin API key.`;
  }
  if (error instanceof AgentBadRequestError) {
    // The API's own words, in a code span: Slack would turn an address in them into a link.
    return md`:warning: The docs agent API rejected the instruction: ${codeSpan(truncateText(error.detail, 300))}. ${nothingSent}`;
  }
  if (error instanceof AgentNotFoundError) {
    return what === 'job'
      ? md`:warning: The docs agent API does not know this bot's documentation project (HTTP 404). ${nothingSent} Please ask an admin to check the project id.`
      : md`:ghost: The agent API no longer knows this job (HTTP 404). ${nothingSent} Start a new job with /docs-agent.`;
  }
  if (error instanceof AgentOutcomeUnknownError || error instanceof AgentInvalidResponseError) {
    return what === 'job'
      ? md`:grey_question: I sent this to the docs agent but did not get a usable answer, so I cannot tell whether the job started. I will not resend it, to avoid duplicate work. If nothing happens, run /docs-agent again.`
      : md`:grey_question: I sent this to the docs agent but did not get a usable answer, so I cannot tell whether the agent received this reply. I will not resend it, to avoid duplicate work. If nothing happens, reply again.`;
  }
  if (error instanceof AgentUnavailableError) {
    return md`:warning: The docs agent API is not reachable right now. ${nothingSent} Please try again in a few minutes.`;
  }
  return md`:warning: Something went wrong on my side. ${nothingSent} Please try again.`;
}

const REFUSALS: Record<Exclude<RefusalReason, 'rate' | 'project_rate'>, Mrkdwn> = {
  team: md`:no_entry: This docs agent serves another Slack workspace or organisation, so it cannot take instructions from here.`,
  channel: md`:no_entry: The docs agent is not enabled in this channel. Ask an admin which channels it serves.`,
  direct: md`:no_entry: The docs agent takes no instructions by direct message here. Use /docs-agent or @docs-agent in a channel it serves.`,
  user: md`:no_entry: You are not on the list of people who may instruct the docs agent. Ask an admin to add you.`,
  guest: md`:no_entry: Guest accounts cannot instruct the docs agent, because its jobs open pull requests on the docs repository.`,
  unverified: md`:hourglass: Slack could not confirm who you are just now, so I cannot answer yet. Please try again in a moment.`,
};

/** Why someone may not give the agent an instruction, said politely and privately. */
export function refusalText(decision: { reason: RefusalReason; retryAt?: Date; limit?: number }): Mrkdwn {
  if (decision.reason === 'rate') {
    const when = decision.retryAt ? md` You can try again ${slackDate(decision.retryAt, '{time}')}.` : md``;
    const limit = decision.limit ?? md`the allowed number of`;
    return md`:hourglass: You have given the docs agent ${limit} instructions in the last hour, the most one person may, so this one was not sent.${when}`;
  }
  if (decision.reason === 'project_rate') {
    const when = decision.retryAt ? md` You can try again ${slackDate(decision.retryAt, '{time}')}.` : md``;
    const limit = decision.limit ?? md`its`;
    return md`:hourglass: The documentation project has reached its hourly limit of ${limit} agent instructions, so this one was not sent.${when}`;
  }
  return REFUSALS[decision.reason];
}
