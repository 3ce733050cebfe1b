import { pullRequestLink, quoteInstruction, type RenderHints, statusLine } from '../blocks/messages.js';
import { cardTsOf, outcomePost } from '../blocks/status-card.js';
import type { Config } from '../config/config.js';
import { outcomeNotification } from '../delivery/kinds/notification.js';
import { mayShowJob } from '../domain/privacy.js';
import type { Logger } from '../logging/logger.js';
import { type Block, LIMITS, section } from '../slack/blocks.js';
import { isDirectMessage } from '../slack/ids.js';
import { checkUrl, permalink } from '../slack/links.js';
import { channelMention, joinMrkdwn, link, type Mrkdwn, md, truncateMrkdwn } from '../slack/mrkdwn.js';
import type { JobRecord, NewOutboxItem, RunOutcome, RunRecord } from '../store/types.js';
import type { JobSettings } from './job-context.js';
import type { JobPrivacyChecks } from './job-privacy.js';

/**
 * Where a run's outcome is told besides its thread: `NOTIFY_ON` (`pr` or `all`),
 * `NOTIFY_REQUESTER` (`thread` or `dm`) and `NOTIFY_PRIVATE_JOBS`, with the channel of each
 * project resolved.
 */
export type NotifySettings = Pick<Config['notify'], 'on' | 'requester' | 'privateJobs'> & {
  /** The notification channel of a job's project (null: the default project), if it has one. */
  channelFor: (projectId: string | null) => string | undefined;
  /** The workspace's address (auth.test `url`), for links to a job's thread; undefined while unknown. */
  workspaceUrl: () => Promise<string | undefined>;
};

/**
 * The items that tell a run's outcome outside its thread, queued in the same store write as
 * the thread's outcome post (so a crash never keeps one without the other): a short post in the
 * project's notification channel when the run opened a pull request (every outcome with
 * `NOTIFY_ON=all`), and a direct message to the requester with `NOTIFY_REQUESTER=dm`.
 */
export async function outcomeNotifications(
  ctx: {
    notify?: NotifySettings | undefined;
    hints: RenderHints;
    settings: JobSettings;
    logger: Logger;
    privacy: Pick<JobPrivacyChecks, 'recheck'>;
  },
  outcome: RunOutcome,
  recorded: JobRecord,
  run: RunRecord,
): Promise<NewOutboxItem[]> {
  const { notify } = ctx;
  if (!notify) return [];
  const channel =
    outcome === 'completed_pr' || notify.on === 'all' ? notify.channelFor(recorded.projectId) : undefined;
  // Told in another channel: a channel made private since the job was asked keeps its words.
  // (Background work: the poller's, never an acknowledgement; the lookup has a time limit.)
  const job = channel && channel !== recorded.channelId ? await ctx.privacy.recheck(recorded) : recorded;
  // A job started in a direct message already tells its requester there, in its own thread.
  const direct = notify.requester === 'dm' && !isDirectMessage(job.channelId);
  if (!channel && !direct) return [];
  // Only for the link to the thread: without it the message names the channel instead.
  const workspaceUrl = await notify.workspaceUrl().catch((error: unknown) => {
    ctx.logger.warn('workspace address unknown; notifications name the channel only', { error });
    return undefined;
  });
  const items: NewOutboxItem[] = [];
  if (channel) {
    const { text } = channelNotification(outcome, job, ctx.hints, workspaceUrl, {
      channel,
      privateJobs: notify.privateJobs,
    });
    items.push(outcomeNotification({ job, run, outcome, to: { channel }, text }));
  }
  if (direct) {
    const { text, blocks } = requesterMessage(
      outcome,
      job,
      ctx.hints,
      ctx.settings.poll.maxAgeMs,
      workspaceUrl,
    );
    items.push(outcomeNotification({ job, run, outcome, to: { user: job.requesterId }, text, blocks }));
  }
  return items;
}

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
