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
import { escapeMrkdwn } from '../slack/mrkdwn.js';
import { truncateText } from '../slack/truncate.js';
import type { JobRecord, RunOutcome } from '../store/types.js';

/** Everything the bot says in Slack, in one place so wording stays consistent. */

export const COMMAND = '/docs-agent';

/** How follow-ups work in this deployment (FOLLOW_UP_MODE, ASIDE_MARKER). */
export interface FollowUpHints {
  mode: 'all' | 'mention';
  /** Empty when asides are off. */
  asideMarker: string;
}

/** How to send a follow-up, in one sentence. */
export function followUpHint(hints: FollowUpHints, where = 'this thread'): string {
  const how =
    hints.mode === 'mention'
      ? `Mention @docs-agent in ${where} to send the agent a follow-up.`
      : `Reply in ${where} to send the agent a follow-up.`;
  return hints.asideMarker
    ? `${how} Start a reply with \`${hints.asideMarker.replace(/`/g, "'")}\` to keep it from the agent.`
    : how;
}

/** Every way to use the bot, in a few lines (`/docs-agent help`, the App Home). */
export const usage = (hints: FollowUpHints) =>
  [
    `*docs-agent* runs the documentation agent on this team's docs and opens a pull request.`,
    `• \`${COMMAND} <instruction>\`: start a job in this channel, e.g. \`${COMMAND} Add a quickstart for the Python SDK\``,
    '• `@docs-agent <instruction>`: start a job right where you are; inside a thread, the earlier messages go to the agent as context.',
    '• *Send to docs agent* (message menu ⋮ → More message shortcuts): start a job about any message.',
    `• ${followUpHint(hints, 'a job’s thread')}`,
    '• The status card at the top of the thread shows progress; the outcome and pull request are posted in the thread.',
    `• \`${COMMAND} list\` your recent jobs · \`${COMMAND} list channel\` this channel’s · \`${COMMAND} status\` quota and health · \`${COMMAND} help\` this message.`,
  ].join('\n');

/** The help with this deployment's defaults, for messages that have no configuration at hand. */
export const USAGE = usage({ mode: 'all', asideMarker: '//' });

const mention = (userId: string) => `<@${userId}>`;
const slackDate = (date: Date) => {
  const epoch = Math.floor(date.getTime() / 1000);
  const fallback = `${date.toISOString().slice(11, 16)} UTC`;
  return `<!date^${epoch}^{time}|${fallback}>`;
};
/** "24 hours", "45 minutes", "30 seconds". */
export function duration(ms: number): string {
  const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  if (ms >= 2 * 3_600_000) return plural(Math.round(ms / 3_600_000), 'hour');
  if (ms >= 2 * 60_000) return plural(Math.round(ms / 60_000), 'minute');
  return plural(Math.max(1, Math.round(ms / 1000)), 'second');
}

const code = (text: string) => `\`${text.replace(/`/g, "'")}\``;

/** Quotes the user's instruction (already Slack mrkdwn) as a block quote, shortened without breaking an entity. */
export function quoteInstruction(instruction: string, max = 2_000): string {
  return truncateText(instruction, max)
    .split('\n')
    .map((line) => `>${line}`)
    .join('\n');
}

/** The job's status in a few words, with its emoji. */
export function statusLine(job: JobRecord): string {
  switch (job.phase) {
    case 'accepted':
    case 'posting':
    case 'creating':
      return ':hourglass_flowing_sand: Starting…';
    case 'active':
      return job.runCount > 1
        ? `:hourglass_flowing_sand: Working (run ${job.runCount})…`
        : ':hourglass_flowing_sand: Working…';
    case 'not_started':
      return ':no_entry: Not started';
    case 'start_unknown':
      return ':grey_question: Unknown whether the job started';
    case 'gone':
      return ':ghost: The agent API no longer knows this job';
    case 'idle':
      return outcomeStatus(job.lastOutcome, job.prLink);
  }
}

function outcomeStatus(outcome: RunOutcome | null, prLink: string | null): string {
  switch (outcome) {
    case 'completed_pr':
      return prLink ? `:white_check_mark: Done: <${prLink}|pull request>` : ':white_check_mark: Done';
    case 'completed_no_changes':
      return ':white_check_mark: Done: no files changed';
    case 'failed':
      return ':x: Failed';
    case 'archived':
      return ':file_cabinet: Archived';
    case 'gone':
      return ':ghost: The agent API no longer knows this job';
    case 'stopped_watching':
      return ':zzz: Stopped watching (still running after the time limit)';
    case null:
      return ':white_check_mark: Done';
  }
}

/** The root message: who asked for what, and where the job stands. */
export function rootText(job: JobRecord, hints: FollowUpHints = { mode: 'all', asideMarker: '' }): string {
  const lines = [
    `:memo: ${mention(job.requesterId)} asked the docs agent:`,
    quoteInstruction(job.instruction),
    `*Status:* ${statusLine(job)}`,
  ];
  if (job.agentJobId) lines.push(`Job ${code(job.agentJobId)}`);
  if (job.phase === 'active' || job.phase === 'idle') {
    lines.push(`_${followUpHint(hints)}_`);
  }
  return lines.join('\n');
}

/** The outcome post for a finished run. `notify` are the users to mention. */
export function outcomeText(outcome: RunOutcome, job: JobRecord, notify: string[], maxAgeMs: number): string {
  const who = notify.map(mention).join(' ');
  const id = job.agentJobId ? code(job.agentJobId) : 'unknown';
  switch (outcome) {
    case 'completed_pr':
      return `${who} :white_check_mark: The docs agent finished and opened a pull request:\n*<${job.prLink}|Review the pull request>*\n${job.prLink}`;
    case 'completed_no_changes':
      return `${who} :white_check_mark: The docs agent finished without changing any files, so no pull request was opened. Reply here to ask for something else.`;
    case 'failed':
      return `${who} :x: The docs agent job failed. The agent API does not say why; quote job ${id} if you contact support. Reply here to try again in the same job, or start a new one with ${COMMAND}.`;
    case 'archived':
      return `${who} :file_cabinet: The docs agent job ${id} was archived, so it will not continue. Start a new one with ${COMMAND}.`;
    case 'gone':
      return `${who} :ghost: The agent API no longer knows job ${id} (it answered 404), so I have stopped watching it. Start a new one with ${COMMAND}.`;
    case 'stopped_watching':
      return job.pollFailures > 0
        ? `${who} :zzz: I could not check on job ${id} for a while (the agent API did not answer me), and after ${duration(maxAgeMs)} I have stopped watching it. Its status is unknown: check the docs dashboard for its result.`
        : `${who} :zzz: Job ${id} is still running after ${duration(maxAgeMs)}, so I have stopped watching it. Check the docs dashboard for its result.`;
  }
}

/** Why an instruction did not reach the agent, in words for the person who gave it. */
export function agentErrorText(error: unknown, what: 'job' | 'follow-up'): string {
  const nothingSent = what === 'job' ? 'No job was started.' : 'This reply was not sent to the agent.';
  if (error instanceof AgentRateLimitedError) {
    const when = error.resetAt
      ? `You can try again ${slackDate(error.resetAt)}.`
      : 'Try again later in the hour.';
    return `:hourglass: The documentation project has reached its hourly limit of agent instructions. ${nothingSent} ${when}`;
  }
  if (error instanceof AgentUnauthorizedError) {
    return `:lock: The docs agent API refused this bot's API key (HTTP ${error.status ?? 401}). ${nothingSent} Please ask a workspace admin to renew the bot's admin API key.`;
  }
  if (error instanceof AgentBadRequestError) {
    return `:warning: The docs agent API rejected the instruction: ${escapeMrkdwn(error.detail)}. ${nothingSent}`;
  }
  if (error instanceof AgentNotFoundError) {
    return what === 'job'
      ? `:warning: The docs agent API does not know this bot's documentation project (HTTP 404). ${nothingSent} Please ask an admin to check the project id.`
      : `:ghost: The agent API no longer knows this job (HTTP 404). ${nothingSent} Start a new job with ${COMMAND}.`;
  }
  if (error instanceof AgentOutcomeUnknownError || error instanceof AgentInvalidResponseError) {
    const subject = what === 'job' ? 'whether the job started' : 'whether the agent received this reply';
    return `:grey_question: I sent this to the docs agent but did not get a usable answer, so I cannot tell ${subject}. I will not resend it, to avoid duplicate work. If nothing happens, ${what === 'job' ? `run ${COMMAND} again` : 'reply again'}.`;
  }
  if (error instanceof AgentUnavailableError) {
    return `:warning: The docs agent API is not reachable right now. ${nothingSent} Please try again in a few minutes.`;
  }
  return `:warning: Something went wrong on my side. ${nothingSent} Please try again.`;
}

const REFUSALS: Record<Exclude<RefusalReason, 'rate' | 'project_rate'>, string> = {
  team: ':no_entry: This docs agent serves another Slack workspace, so it cannot take instructions from here.',
  channel: ':no_entry: The docs agent is not enabled in this channel. Ask an admin which channels it serves.',
  user: ':no_entry: You are not on the list of people who may instruct the docs agent. Ask an admin to add you.',
  guest:
    ':no_entry: Guest accounts cannot instruct the docs agent, because its jobs open pull requests on the docs repository.',
};

/** Why someone may not give the agent an instruction, said politely and privately. */
export function refusalText(decision: { reason: RefusalReason; retryAt?: Date; limit?: number }): string {
  if (decision.reason === 'rate') {
    const when = decision.retryAt ? ` You can try again ${slackDate(decision.retryAt)}.` : '';
    return `:hourglass: You have given the docs agent ${decision.limit ?? 'the allowed number of'} instructions in the last hour, the most one person may, so this one was not sent.${when}`;
  }
  if (decision.reason === 'project_rate') {
    const when = decision.retryAt ? ` You can try again ${slackDate(decision.retryAt)}.` : '';
    return `:hourglass: The documentation project has reached its hourly limit of ${decision.limit ?? 'its'} agent instructions, so this one was not sent.${when}`;
  }
  return REFUSALS[decision.reason];
}

export const text = {
  pollRefused: (requesterId: string) =>
    `${mention(requesterId)} :lock: I cannot check on this job: the docs agent API refuses this bot's API key. Please ask a workspace admin to renew it; I keep trying and will post the result once I can.`,
  notRecorded: () =>
    ':warning: I could not record that instruction, so nothing was started. Please try again in a moment.',
  promptTooLong: (length: number, max: number) =>
    `:straight_ruler: That instruction is ${length.toLocaleString('en-US')} characters long; the limit is ${max.toLocaleString('en-US')}. Nothing was sent. Please shorten it, or split it into a first instruction and follow-ups in the thread.`,
  unknownSubcommand: (word: string, help: string = USAGE) =>
    `:information_source: \`${word.replace(/`/g, "'")}\` is not a ${COMMAND} subcommand, so nothing was started.\n${help}`,
  reportUnavailable: () => ':warning: I could not read my records just now. Please try again in a moment.',
  notInChannel: (channelId: string) =>
    channelId.startsWith('D') || channelId.startsWith('G')
      ? `:wave: I can't post in this conversation, so no job was started. Run ${COMMAND} in a channel I am in (invite me with \`/invite @docs-agent\`).`
      : `:wave: I can't post in <#${channelId}>, so no job was started. Invite me with \`/invite @docs-agent\` and run the command again.`,
  directMessage: () =>
    `:wave: Jobs run in channels, where the job's thread lets everyone follow along and reply. Run ${COMMAND} in a channel I am in (invite me with \`/invite @docs-agent\`). Nothing was started.`,
  cannotPost: (reason: string) =>
    `:warning: I couldn't post in this conversation (Slack said \`${reason}\`), so no job was started.`,
  restartedBeforeCreate: (requesterId: string) =>
    `${mention(requesterId)} :grey_question: I restarted while starting this job and cannot tell whether the docs agent received it. I will not resend it, to avoid a duplicate pull request. If no result appears here, run ${COMMAND} again.`,
  restartedBeforePost: () =>
    `:warning: I restarted before your ${COMMAND} instruction was sent to the agent, so nothing was started. Please run the command again.`,
  followUpNoJob: (phase: string) =>
    `:information_source: This thread has no running agent job (${phase === 'not_started' ? 'it was never started' : 'it is not known whether it started'}), so your reply was not sent. ${phase === 'not_started' ? 'Mention @docs-agent with your instruction to start one here' : `Start a new job with ${COMMAND}`}.`,
  followUpJobGone: () =>
    ':ghost: The agent API no longer knows this job, so your reply was not sent. Mention @docs-agent with your instruction to start a new one here.',
  followUpRestarted: (authorId: string) =>
    `${mention(authorId)} :grey_question: I restarted while sending your reply to the agent and cannot tell whether it arrived. I will not resend it; reply again if nothing happens.`,
  emptyFollowUp: () => ':information_source: That reply has no text, so nothing was sent to the agent.',
  modalNotUnderstood: () => 'I could not read this form. Close it and use the shortcut again.',
  modalNoInstruction: () => 'Write what the docs agent should do.',
  modalTooLong: (length: number, max: number) =>
    `That is ${length.toLocaleString('en-US')} characters; the limit is ${max.toLocaleString('en-US')}. Shorten it, or send the rest as a follow-up in the job’s thread.`,
  modalNoChannel: () => 'Pick the channel to run the job in.',
  modalDirect: () => 'Jobs run in channels, where everyone can follow the thread. Pick a channel.',
  modalChannelNotAllowed: (channel: string) =>
    `The docs agent is not enabled in <#${channel}>. Pick another channel, or ask an admin which channels it serves.`,
  modalChannelMissing: () => 'I cannot see that channel. Pick a channel I am a member of.',
  modalArchived: (channel: string) => `<#${channel}> is archived. Pick another channel.`,
  modalNotMember: (channel: string) =>
    `I am not a member of <#${channel}>, so I cannot post the job there. Invite me with /invite @docs-agent, or pick another channel.`,
  modalThreadHasJob: () =>
    'This message’s thread already has a docs agent job: reply in that thread to send it a follow-up, or pick another channel to start a new job.',
  bareMention: () =>
    ':wave: Tell me what to do after the mention, e.g. `@docs-agent Document the new rate limits`. Inside a thread, I read the earlier messages as context. Nothing was started.',
};
