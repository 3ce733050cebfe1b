import type { Config } from '../config/config.js';
import { mayShowJob } from '../domain/privacy.js';
import { type Block, LIMITS, section } from '../slack/blocks.js';
import { checkUrl, permalink } from '../slack/links.js';
import { channelMention, joinMrkdwn, link, type Mrkdwn, md, truncateMrkdwn } from '../slack/mrkdwn.js';
import type { JobRecord, RunOutcome } from '../store/types.js';
import { pullRequestLink, quoteInstruction, type RenderHints, statusLine } from './messages.js';
import { cardTsOf, outcomePost } from './status-card.js';

/** Characters of the instruction a channel notification quotes: enough to recognise the job. */
const NOTIFICATION_QUOTE_CHARS = 200;

/**
 * The job's thread as a link (from the workspace address, auth.test's `url`), or its channel
 * alone while that address is unknown.
 */
function threadReference(job: JobRecord, workspaceUrl: string | undefined): Mrkdwn {
  const card = cardTsOf(job) ?? job.threadTs;
  const url =
    card && job.threadTs ? checkUrl(permalink(workspaceUrl, job.channelId, card, job.threadTs)) : undefined;
  return url
    ? md`${link(url, 'the job’s thread')} in ${channelMention(job.channelId)}`
    : md`its thread in ${channelMention(job.channelId)}`;
}

/** Where a channel notification goes, and what it may say of a job asked for in private. */
export interface NotificationPlace {
  /** The notification channel: its members are the audience. */
  channel: string;
  /** `NOTIFY_PRIVATE_JOBS`: whether a private job's instruction is quoted (`quote`) or not. */
  privateJobs: Config['notify']['privateJobs'];
}

/**
 * The short post in the notification channel (`NOTIFY_CHANNEL_ID`): the outcome, the pull
 * request, the job's thread, and the instruction quoted inert. It mentions nobody: the people
 * involved are told in the thread. A job whose words its members may not read (asked in a
 * direct message, the assistant pane or another private channel, or where Slack could not say)
 * is told by its outcome and pull request only: never a link to or a mention of where it was
 * asked, which the channel cannot open, and its instruction only with `NOTIFY_PRIVATE_JOBS=quote`.
 */
export function channelNotification(
  outcome: RunOutcome,
  job: JobRecord,
  hints: RenderHints,
  workspaceUrl: string | undefined,
  place: NotificationPlace,
): { text: Mrkdwn } {
  const what =
    outcome === 'completed_pr'
      ? md`:white_check_mark: The docs agent opened a pull request: *${pullRequestLink(job.prLink, hints, 'Review the pull request')}*`
      : md`*Docs agent:* ${statusLine(job, hints)}`;
  const quote = quoteInstruction(job.instruction, NOTIFICATION_QUOTE_CHARS);
  let lines: Mrkdwn[];
  if (mayShowJob(job, { channelId: place.channel }))
    lines = [md`${what} · see ${threadReference(job, workspaceUrl)}`, quote];
  else if (place.privateJobs === 'quote')
    lines = [what, md`:lock: Asked for in private, so its thread is not linked here:`, quote];
  else lines = [what, md`:lock: Asked for in private, so its words and its thread stay there.`];
  return { text: truncateMrkdwn(joinMrkdwn(lines), LIMITS.messageText) };
}

/**
 * The direct message to the requester (`NOTIFY_REQUESTER=dm`): the thread's outcome post,
 * introduced. Their own words, and their own job's thread: a place they asked in (a job asked in
 * a direct message or the pane is told there, and gets none of these).
 */
export function requesterMessage(
  outcome: RunOutcome,
  job: JobRecord,
  hints: RenderHints,
  maxAgeMs: number,
  workspaceUrl: string | undefined,
): { text: Mrkdwn; blocks: Block[] } {
  const intro = md`:bell: News of your docs agent job, also posted in ${threadReference(job, workspaceUrl)}:`;
  const post = outcomePost(outcome, job, [], maxAgeMs, hints);
  return {
    text: truncateMrkdwn(joinMrkdwn([intro, post.text]), LIMITS.messageText),
    blocks: [section(intro), ...post.blocks],
  };
}
