import { stepExecutionOfKey } from '../domain/keys.js';
import { STILL_STARTING, TAKES_FOLLOW_UPS } from '../domain/phases.js';
import { isPrivateConversation } from '../slack/ids.js';
import { checkPullRequestUrl } from '../slack/links.js';
import {
  blockQuote,
  channelMention,
  codeSpan,
  escapeMrkdwn,
  inertSlackText,
  joinMrkdwn,
  link,
  type Mrkdwn,
  md,
  truncateMrkdwn,
  truncateText,
  userMention,
} from '../slack/mrkdwn.js';
import type { JobRecord, RunOutcome } from '../store/types.js';

/**
 * Everything the bot says in Slack, in one place so wording stays consistent. Every text is
 * {@link Mrkdwn}: what a person or the agent API wrote goes in only through an escaping builder.
 */

export const COMMAND = '/docs-agent';

/** Most file names a private note lists; the rest are counted. */
const NOTE_FILES_LISTED = 5;

/**
 * Most characters of a follow-up quoted back in its thread: the agent gets it whole; the thread
 * shows enough to know what was asked without a wall of text.
 */
const FOLLOW_UP_SHOWN_CHARS = 2_000;

/** How this deployment presents jobs: follow-up mode, aside marker, trusted pull request hosts. */
export interface RenderHints {
  mode: 'all' | 'mention';
  /** Empty when asides are off. */
  asideMarker: string;
  /** Hosts whose pull request addresses become links and buttons (`PR_LINK_HOSTS`). */
  prLinkHosts: readonly string[];
}

/** How to send a follow-up, in one sentence. */
export function followUpHint(hints: RenderHints, where: Mrkdwn = md`this thread`): Mrkdwn {
  const how =
    hints.mode === 'mention'
      ? md`Mention @docs-agent in ${where} to send the agent a follow-up.`
      : md`Reply in ${where} to send the agent a follow-up.`;
  return hints.asideMarker
    ? md`${how} Start a reply with ${codeSpan(hints.asideMarker)} to keep it from the agent.`
    : how;
}

/** "24 hours", "45 minutes", "30 seconds". */
export function duration(ms: number): Mrkdwn {
  const plural = (n: number, unit: Mrkdwn) => (n === 1 ? md`${n} ${unit}` : md`${n} ${unit}s`);
  if (ms >= 2 * 3_600_000) return plural(Math.round(ms / 3_600_000), md`hour`);
  if (ms >= 2 * 60_000) return plural(Math.round(ms / 60_000), md`minute`);
  return plural(Math.max(1, Math.round(ms / 1000)), md`second`);
}

/**
 * Quotes the person's instruction (as Slack encoded it) as a block quote: readable, inert (no
 * mention notifies, no link hides its address) and shortened without breaking an escape.
 */
export function quoteInstruction(instruction: string, max = 2_000): Mrkdwn {
  return blockQuote(truncateMrkdwn(inertSlackText(instruction), max));
}

/** How many characters of an address that is not shown as a link are shown as text. */
const INERT_ADDRESS_CHARS = 200;

/** An address from the agent API shown as text: in a code span, so Slack does not link it. */
const inertAddress = (address: string) => codeSpan(truncateText(address, INERT_ADDRESS_CHARS));

/**
 * The pull request as a link labelled `label` when its address is trusted (`PR_LINK_HOSTS`),
 * else the words and the address as inert text.
 */
export function pullRequestLink(
  prLink: string | null,
  hints: Pick<RenderHints, 'prLinkHosts'>,
  label: string,
): Mrkdwn {
  const url = checkPullRequestUrl(prLink, hints.prLinkHosts);
  if (url) return link(url, label);
  return prLink ? md`${escapeMrkdwn(label)} at ${inertAddress(prLink)}` : escapeMrkdwn(label);
}

/** The job's status in a few words, with its emoji. */
export function statusLine(job: JobRecord, hints: Pick<RenderHints, 'prLinkHosts'>): Mrkdwn {
  if (STILL_STARTING.has(job.phase)) return md`:hourglass_flowing_sand: Starting…`;
  switch (job.phase) {
    case 'active':
      return job.runCount > 1
        ? md`:hourglass_flowing_sand: Working (run ${job.runCount})…`
        : md`:hourglass_flowing_sand: Working…`;
    case 'not_started':
      return md`:no_entry: Not started`;
    case 'start_unknown':
      return md`:grey_question: Unknown whether the job started`;
    case 'gone':
      return md`:ghost: The agent API no longer knows this job`;
    case 'retried':
      return md`:repeat: Retried as a new job`;
    case 'idle':
      return outcomeStatus(job.lastOutcome, job.prLink, hints);
  }
}

function outcomeStatus(
  outcome: RunOutcome | null,
  prLink: string | null,
  hints: Pick<RenderHints, 'prLinkHosts'>,
): Mrkdwn {
  switch (outcome) {
    case 'completed_pr':
      return prLink
        ? md`:white_check_mark: Done: ${pullRequestLink(prLink, hints, 'pull request')}`
        : md`:white_check_mark: Done`;
    case 'completed_no_changes':
      return md`:white_check_mark: Done: no files changed`;
    case 'failed':
      return md`:x: Failed`;
    case 'archived':
      return md`:file_cabinet: Archived`;
    case 'gone':
      return md`:ghost: The agent API no longer knows this job`;
    case 'stopped_watching':
      return md`:zzz: Stopped watching (still running after the time limit)`;
    case null:
      return md`:white_check_mark: Done`;
  }
}

/**
 * Whether a Workflow Builder step started the job (not "Try again" on such a job, which keeps
 * its origin but is the job of the person who pressed it): read from what the job records.
 */
export const startedByWorkflow = (job: Pick<JobRecord, 'origin' | 'triggerKey'>): boolean =>
  job.origin === 'workflow' && stepExecutionOfKey(job.triggerKey) !== undefined;

/**
 * Who the job is for: a person who asked, or, for a Workflow Builder step's job, that a workflow
 * started it (whether the person used the workflow or was named in it, the job counts as theirs).
 */
export function askedBy(job: Pick<JobRecord, 'origin' | 'triggerKey' | 'requesterId'>): Mrkdwn {
  return startedByWorkflow(job)
    ? md`Started by a workflow for ${userMention(job.requesterId)}`
    : md`${userMention(job.requesterId)} asked the docs agent`;
}

/** The status card's text: who asked for what, and where the job stands. */
export function cardText(job: JobRecord, hints: RenderHints): Mrkdwn {
  const lines = [
    md`:memo: ${askedBy(job)}:`,
    quoteInstruction(job.instruction),
    md`*Status:* ${statusLine(job, hints)}`,
  ];
  if (job.agentJobId) lines.push(md`Job ${codeSpan(job.agentJobId)}`);
  if (TAKES_FOLLOW_UPS.has(job.phase)) {
    lines.push(md`_${followUpHint(hints)}_`);
  }
  return joinMrkdwn(lines);
}

/** The outcome post for a finished run. `notify` are the users to mention. */
export function outcomeText(
  outcome: RunOutcome,
  job: JobRecord,
  notify: string[],
  maxAgeMs: number,
  hints: Pick<RenderHints, 'prLinkHosts'>,
): Mrkdwn {
  // Nobody to notify (the requester's own direct message): the text starts with the emoji, not a space.
  const who = notify.length > 0 ? md`${joinMrkdwn(notify.map(userMention), md` `)} ` : md``;
  const id = job.agentJobId ? codeSpan(job.agentJobId) : md`unknown`;
  switch (outcome) {
    case 'completed_pr': {
      const url = checkPullRequestUrl(job.prLink, hints.prLinkHosts);
      if (url)
        return md`${who}:white_check_mark: The docs agent finished and opened a pull request:\n*${link(url, 'Review the pull request')}*\n${escapeMrkdwn(url)}`;
      return job.prLink
        ? md`${who}:white_check_mark: The docs agent finished and opened a pull request at ${inertAddress(job.prLink)}. I am not showing it as a link because its address is not on this bot's list of pull request hosts: check it before you open it.`
        : md`${who}:white_check_mark: The docs agent finished and opened a pull request.`;
    }
    case 'completed_no_changes':
      return md`${who}:white_check_mark: The docs agent finished without changing any files, so no pull request was opened. Reply here to ask for something else.`;
    case 'failed':
      return md`${who}:x: The docs agent job failed. The agent API does not say why; quote job ${id} if you contact support. Reply here to try again in the same job, or press *Try again* on the card above to start it over as a new job.`;
    case 'archived':
      return md`${who}:file_cabinet: The docs agent job ${id} was archived, so it will not continue. Start a new one with /docs-agent.`;
    case 'gone':
      return md`${who}:ghost: The agent API no longer knows job ${id} (it answered 404), so I have stopped watching it. Start a new one with /docs-agent.`;
    case 'stopped_watching':
      return job.pollFailures > 0
        ? md`${who}:zzz: I could not check on job ${id} for a while (the agent API did not answer me), and after ${duration(maxAgeMs)} I have stopped watching it. Its status is unknown: check the docs dashboard for its result.`
        : md`${who}:zzz: Job ${id} is still running after ${duration(maxAgeMs)}, so I have stopped watching it. Check the docs dashboard for its result.`;
  }
}

const count = (n: number) => escapeMrkdwn(n.toLocaleString('en-US'));

export const text = {
  pollRefused: (requesterId: string) =>
    md`${userMention(requesterId)} :lock: I cannot check on this job: the docs agent API refuses this bot's API key. Please ask a workspace admin to renew it; I keep trying and will post the result once I can.`,
  notRecorded: () =>
    md`:warning: I could not record that instruction, so nothing was started. Please try again in a moment.`,
  promptTooLong: (length: number, max: number) =>
    md`:straight_ruler: That instruction is ${count(length)} characters long; the limit is ${count(max)}. Nothing was sent. Please shorten it, or split it into a first instruction and follow-ups in the thread.`,
  notInChannel: (channelId: string) =>
    isPrivateConversation(channelId)
      ? md`:wave: I can't post in this conversation, so no job was started. Run /docs-agent in a channel I am in (invite me with \`/invite @docs-agent\`).`
      : md`:wave: I can't post in ${channelMention(channelId)}, so no job was started. Invite me with \`/invite @docs-agent\` and run the command again.`,
  cannotPost: (reason: string) =>
    md`:warning: I couldn't post in this conversation (Slack said ${codeSpan(truncateText(reason, 100))}), so no job was started.`,
  restartedBeforeCreate: (requesterId: string) =>
    md`${userMention(requesterId)} :grey_question: I restarted while starting this job and cannot tell whether the docs agent received it. I will not resend it, to avoid a duplicate pull request. If no result appears here, run /docs-agent again.`,
  restartedBeforePost: () =>
    md`:warning: I restarted before your /docs-agent instruction was sent to the agent, so nothing was started. Please run the command again.`,
  followUpNoJob: (phase: string) =>
    phase === 'not_started'
      ? md`:information_source: This thread has no running agent job (it was never started), so your reply was not sent. Mention @docs-agent with your instruction to start one here.`
      : md`:information_source: This thread has no running agent job (it is not known whether it started), so your reply was not sent. Start a new job with /docs-agent.`,
  followUpJobGone: () =>
    md`:ghost: The agent API no longer knows this job, so your reply was not sent. Mention @docs-agent with your instruction to start a new one here.`,
  followUpRestarted: (authorId: string) =>
    md`${userMention(authorId)} :grey_question: I restarted while sending your reply to the agent and cannot tell whether it arrived. I will not resend it; reply again if nothing happens.`,
  /**
   * A follow-up that no message in the thread carried (sent from a modal), shown there so the
   * thread keeps the whole conversation: who sent it and what, quoted inert.
   */
  followUpShown: (authorId: string, prompt: string) =>
    md`:speech_balloon: ${userMention(authorId)} sent the agent a follow-up:\n${blockQuote(escapeMrkdwn(truncateText(prompt, FOLLOW_UP_SHOWN_CHARS)))}`,
  emptyFollowUp: () => md`:information_source: That reply has no text, so nothing was sent to the agent.`,
  awaitingVerification: () =>
    md`:hourglass: Slack could not confirm who you are just now, so your instruction has not been sent to the agent yet. I have kept it and will check again; once Slack answers it is sent, or you are told why not.`,
  verificationTimedOut: () =>
    md`:warning: Slack could not confirm who you are for half an hour, so your instruction was not sent to the agent. Please send it again.`,
  /** Files shared with an instruction: the agent API takes text only, so their names are all it gets. */
  filesUnseen: (files: readonly { name: string; type: string }[]) => {
    const listed = files.slice(0, NOTE_FILES_LISTED).map((f) => codeSpan(truncateText(f.name, 80)));
    const more = files.length - listed.length;
    const names = joinMrkdwn(more > 0 ? [...listed, md`${more} more`] : listed, md`, `);
    return md`:paperclip: Files do not reach the docs agent: it gets only their names and types (${names}), with your text. Paste what it needs from them into your message.`;
  },
};
