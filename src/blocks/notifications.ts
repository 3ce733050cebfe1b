import { type Block, LIMITS, section } from '../slack/blocks.js';
import { checkUrl } from '../slack/links.js';
import { channelMention, joinMrkdwn, link, type Mrkdwn, md, truncateMrkdwn } from '../slack/mrkdwn.js';
import { permalink } from '../slack/permalink.js';
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

/**
 * The short post in the notification channel (`NOTIFY_CHANNEL_ID`): the outcome, the pull
 * request, the job's thread, and the instruction quoted inert. It mentions nobody: the people
 * involved are told in the thread.
 */
export function channelNotification(
  outcome: RunOutcome,
  job: JobRecord,
  hints: RenderHints,
  workspaceUrl: string | undefined,
): { text: Mrkdwn } {
  const what =
    outcome === 'completed_pr'
      ? md`:white_check_mark: The docs agent opened a pull request: *${pullRequestLink(job.prLink, hints, 'Review the pull request')}*`
      : md`*Docs agent:* ${statusLine(job, hints)}`;
  const text = joinMrkdwn([
    md`${what} · see ${threadReference(job, workspaceUrl)}`,
    quoteInstruction(job.instruction, NOTIFICATION_QUOTE_CHARS),
  ]);
  return { text: truncateMrkdwn(text, LIMITS.messageText) };
}

/** The direct message to the requester (`NOTIFY_REQUESTER=dm`): the thread's outcome post, introduced. */
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
