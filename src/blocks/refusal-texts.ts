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
import { isPrivateConversation, isUserId, SLACK_ID } from '../slack/ids.js';
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

/*
 * What a Workflow Builder step says when it cannot do its work. Slack shows a step's error as
 * plain text in the workflow's activity, to the person who built the workflow: not the person
 * the job was for, and not in a chat. So these are plain text, with no emoji codes, speak of the
 * people and the channel in the third person (by id: plain text shows no names), and say what the
 * builder can change in the workflow. The chat keeps its own words (`messages.ts`,
 * `refusal-texts.ts`); the job's requester still gets those where a chat surface would.
 */

/** A person, as plain text: `@U0123` (an id that is not a person's id is not echoed). */
export const person = (userId: string) => (isUserId(userId) ? `@${userId}` : 'the person named');
/** A channel, as plain text: `#C0123`. */
const place = (channelId: string) =>
  SLACK_ID.test(channelId) && /^[CG]/.test(channelId) ? `#${channelId}` : "the step's channel";
/** A time the builder can act after, as plain text in UTC (plain text cannot show local time). */
const at = (when: Date) => `${when.toISOString().slice(11, 16)} UTC`;

/** Why the checks refused an instruction: the access policy's reasons, its length, or a hold that lasted. */
export type InstructionRefusal =
  | { reason: RefusalReason; retryAt?: Date | undefined; limit?: number | undefined }
  | { reason: 'too_long'; length: number; max: number }
  | { reason: 'held_too_long' };

/** Why a step's job did not start (or may not have), after it was recorded. */
export type StepRefusal =
  | InstructionRefusal
  | { reason: 'not_in_channel' }
  | { reason: 'cannot_post'; code: string }
  | { reason: 'agent'; error: unknown }
  | { reason: 'restarted_before_post' }
  | { reason: 'restarted_before_create' };

/** Who the job was for, and where its thread was to go. */
export interface StepSubject {
  userId: string;
  channelId: string;
}

/** How every step refusal says that nothing was started. */
export const NOTHING = 'Nothing was started.';

/** Why the access policy refused: the person, the place, the hourly limits. */
function accessStepText(
  refusal: { reason: RefusalReason; retryAt?: Date | undefined; limit?: number | undefined },
  { userId, channelId }: StepSubject,
): string {
  const who = person(userId);
  const mayNot = `${who} may not instruct the docs agent in ${place(channelId)}`;
  const again = refusal.retryAt ? ` Run the workflow again after ${at(refusal.retryAt)}.` : '';
  switch (refusal.reason) {
    case 'team':
      return `${mayNot}: ${who} belongs to another Slack workspace or organisation than the one the docs agent serves. ${NOTHING} Start the job for a person of that workspace.`;
    case 'channel':
      return `${mayNot}: the docs agent is not enabled in that channel (ALLOWED_CHANNEL_IDS). ${NOTHING} Pick a channel it serves for the step.`;
    case 'direct':
      return `${mayNot}: the docs agent takes no instructions by direct message. ${NOTHING} Pick a channel for the step.`;
    case 'user':
      return `${mayNot}: ${who} is not on the list of people who may (ALLOWED_USER_IDS). ${NOTHING} Ask the bot's operator to add ${who}, or start the job for someone on the list.`;
    case 'guest':
      return `${mayNot}: guest accounts may not, because its jobs open pull requests on the docs repository. ${NOTHING} Start the job for a full member.`;
    case 'unverified':
      return `Slack could not confirm who ${who} is just now. ${NOTHING} Run the workflow again in a few minutes.`;
    case 'rate':
      return `${who} has given the docs agent ${refusal.limit ?? 'the allowed number of'} instructions in the last hour, the most one person may. ${NOTHING}${again || ' Run the workflow again later.'}`;
    case 'project_rate':
      return `The documentation project has reached its hourly limit of ${refusal.limit === undefined ? '' : `${refusal.limit} `}agent instructions. ${NOTHING}${again || ' Run the workflow again later.'}`;
  }
}

/** Why the agent API did not take the job (or may have). */
function agentStepText(error: unknown, subject: StepSubject): string {
  if (error instanceof AgentRateLimitedError) {
    const when = error.resetAt ? `after ${at(error.resetAt)}` : 'later in the hour';
    return `The documentation project has reached its hourly limit of agent instructions. ${NOTHING} Run the workflow again ${when}.`;
  }
  if (error instanceof AgentUnauthorizedError)
    return `The docs agent API refused the bot's API key (HTTP ${error.status ?? 401}). ${NOTHING} The bot's operator must renew its admin API key.`;
  if (error instanceof AgentBadRequestError)
    return `The docs agent API rejected the instruction: ${truncateText(error.detail, 300)}. ${NOTHING} Change the step's instruction.`;
  if (error instanceof AgentNotFoundError)
    return `The docs agent API does not know the documentation project (HTTP 404). ${NOTHING} Check the step's documentation project, or ask the bot's operator to check its project id.`;
  if (error instanceof AgentOutcomeUnknownError || error instanceof AgentInvalidResponseError)
    return `The docs agent API gave no usable answer, so it is not known whether the job started; it is not sent again, to avoid duplicate work. If no result appears in the job's thread in ${place(subject.channelId)}, run the workflow again.`;
  if (error instanceof AgentUnavailableError)
    return `The docs agent API could not be reached. ${NOTHING} Run the workflow again in a few minutes.`;
  return `Something went wrong in the docs agent bot. ${NOTHING} Run the workflow again.`;
}

/** The words a step's failure shows, as plain text, for a job it recorded that did not start. */
export function stepRefusalText(refusal: StepRefusal, subject: StepSubject): string {
  const where = place(subject.channelId);
  switch (refusal.reason) {
    case 'too_long':
      return `The step's instruction is ${refusal.length.toLocaleString('en-US')} characters long; the limit is ${refusal.max.toLocaleString('en-US')} (MAX_PROMPT_CHARS). ${NOTHING} Shorten the step's instruction.`;
    case 'held_too_long':
      return `Slack could not confirm who ${person(subject.userId)} is before the step's time ran out. ${NOTHING} Run the workflow again.`;
    case 'not_in_channel':
      return isPrivateConversation(subject.channelId)
        ? `The docs agent cannot post in ${where}, so the job's thread could not be posted. ${NOTHING} Invite the bot to that channel (/invite @docs-agent), or pick another channel for the step.`
        : `The docs agent is not a member of ${where}, so the job's thread could not be posted. ${NOTHING} Invite the bot to that channel (/invite @docs-agent), or pick another channel for the step.`;
    case 'cannot_post':
      return `Slack refused the docs agent's post in ${where} (${truncateText(refusal.code, 100)}). ${NOTHING} Pick another channel for the step, or ask the bot's operator.`;
    case 'agent':
      return agentStepText(refusal.error, subject);
    case 'restarted_before_post':
      return `The bot restarted before the job reached the docs agent. ${NOTHING} Run the workflow again.`;
    case 'restarted_before_create':
      return `The bot restarted while starting the job and cannot tell whether the docs agent received it; it is not sent again, to avoid a duplicate pull request. If no result appears in the job's thread in ${where}, run the workflow again.`;
    default:
      return accessStepText(refusal, subject);
  }
}

/**
 * The message a step replies under already has a job: found as the step's job is recorded, so the
 * job kernel refuses it. Plain text.
 */
export const threadHasJobText = () =>
  `The message the step replies under already has a docs agent job. ${NOTHING} Leave "Reply under message" empty to start a new thread; to steer that job, reply in its thread.`;

/** What a "Wait for a docs agent job" step says when it ends without an outcome: plain text. */
export const waitText = {
  noSuchJob: () =>
    'No docs agent job with that id was started by a workflow, so there is nothing to wait for. Use the job id output of the "Start a docs agent job" step.',
  neverStarted: (link: string | undefined) =>
    `The docs agent job did not start, or it is not known whether it did.${link ? ` Its thread says why: ${link}` : ''}`,
  stillRunning: (minutes: number, link: string | undefined) =>
    `The docs agent job is still working after ${minutes} minutes, and Slack ends a workflow step after 15. Its outcome will be posted in its thread${link ? `: ${link}` : '.'}`,
};
