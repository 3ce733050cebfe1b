import { type Audience, mayShowJob } from '../domain/privacy.js';
import { type Block, context, divider, header, LIMITS, section } from '../slack/blocks.js';
import { isDirectMessage } from '../slack/ids.js';
import { checkUrl, permalink } from '../slack/links.js';
import {
  channelMention,
  escapeMrkdwn,
  joinMrkdwn,
  link,
  type Mrkdwn,
  md,
  mrkdwnToPlain,
  slackDate,
  truncateMrkdwn,
  truncateText,
  userMention,
} from '../slack/mrkdwn.js';
import type { JobRecord } from '../store/types.js';
import { duration, pullRequestLink, type RenderHints, startedByWorkflow, statusLine } from './messages.js';
import { cardTsOf } from './status-card.js';

/** How many jobs a list shows. */
export const LIST_LIMIT = 10;
/** How many jobs the App Home shows. */
export const HOME_LIMIT = 15;

export interface ListContext {
  /** The workspace's address, for thread permalinks (auth.test `url`). */
  workspaceUrl: string | undefined;
  now: number;
  /** Hosts whose pull request addresses become links (`PR_LINK_HOSTS`). */
  prLinkHosts: RenderHints['prLinkHosts'];
  /**
   * Who sees the list: the person, and the conversation it is shown in. A job they may not see
   * (asked in private by someone else, elsewhere) is listed without its words or its place.
   */
  viewer: Audience;
}

/** The instruction as a short one-line label, readable and inert (it becomes a link's label). */
const label = (instruction: string) =>
  truncateText(mrkdwnToPlain(instruction).replace(/\s+/g, ' ').trim(), 80) || '(no instruction)';

/** One job in a list: its instruction linking to its thread, status, age, and pull request. */
export function jobLine(job: JobRecord, ctx: ListContext): Mrkdwn {
  if (!mayShowJob(job, ctx.viewer)) return privateJobLine(job, ctx);
  const card = cardTsOf(job);
  const thread =
    card && job.threadTs
      ? checkUrl(permalink(ctx.workspaceUrl, job.channelId, card, job.threadTs))
      : undefined;
  const title = thread
    ? md`*${link(thread, label(job.instruction))}*`
    : md`*${escapeMrkdwn(label(job.instruction))}*`;
  const parts = [
    statusLine(job, ctx),
    // A direct message has no name to show: Slack would render its mention as an unknown channel.
    isDirectMessage(job.channelId) ? md`direct message` : channelMention(job.channelId),
    md`${duration(Math.max(0, ctx.now - job.createdAt))} ago`,
  ];
  // A step's job is its person's, but they may not have asked for it: say a workflow did.
  if (startedByWorkflow(job)) parts.push(md`started by a workflow for ${userMention(job.requesterId)}`);
  if (job.prLink) parts.push(pullRequestLink(job.prLink, ctx, 'pull request'));
  return md`${title}\n${joinMrkdwn(parts, md` · `)}`;
}

/** A job the viewer may not see: that it ran and what became of it, nothing of its words or place. */
function privateJobLine(job: JobRecord, ctx: ListContext): Mrkdwn {
  const parts = [statusLine(job, ctx), md`${duration(Math.max(0, ctx.now - job.createdAt))} ago`];
  if (job.prLink) parts.push(pullRequestLink(job.prLink, ctx, 'pull request'));
  return md`*:lock: A job asked for in private*\n${joinMrkdwn(parts, md` · `)}`;
}

/** `/docs-agent list` (the user's jobs) and `/docs-agent list channel` (this channel's). */
export function jobListMessage(
  jobs: JobRecord[],
  scope: { kind: 'mine' } | { kind: 'channel'; channelId: string },
  ctx: ListContext,
): { text: Mrkdwn; blocks: Block[] } {
  const title =
    scope.kind === 'mine'
      ? md`Your recent docs agent jobs`
      : md`Recent docs agent jobs in ${channelMention(scope.channelId)}`;
  if (jobs.length === 0) {
    const none =
      scope.kind === 'mine'
        ? md`:information_source: You have not started any docs agent jobs yet. Try \`/docs-agent &lt;instruction&gt;\` or mention @docs-agent.`
        : md`:information_source: No docs agent jobs have been started in this channel yet.`;
    return { text: none, blocks: [section(none)] };
  }
  const lines = jobs.slice(0, LIST_LIMIT).map((job) => jobLine(job, ctx));
  const text = truncateMrkdwn(md`${title}:\n${joinMrkdwn(lines)}`, LIMITS.messageText);
  return {
    text,
    blocks: [
      section(md`*${title}*`),
      ...lines.map((line) => section(line)),
      context(
        scope.kind === 'mine'
          ? md`Newest first. \`/docs-agent list channel\` shows this channel’s jobs.`
          : md`Newest first. \`/docs-agent list\` shows your own jobs.`,
      ),
    ],
  };
}

/**
 * The App Home tab: the person's recent jobs, how the agent is doing for the team (`figures`,
 * from `blocks/figures.ts`), and how to use the bot.
 */
export function homeView(
  jobs: JobRecord[],
  guide: Mrkdwn,
  ctx: ListContext,
  figures: readonly Mrkdwn[] = [],
): Record<string, unknown> {
  const blocks: Block[] = [header('Your docs agent jobs')];
  if (jobs.length === 0) {
    blocks.push(section(md`You have not started any jobs yet. Here is how:`));
  } else {
    for (const job of jobs.slice(0, HOME_LIMIT)) blocks.push(section(jobLine(job, ctx)));
    blocks.push(context(md`Updated ${slackDate(ctx.now, '{date_short_pretty} at {time}')}`));
  }
  if (figures.length > 0)
    blocks.push(divider(), header('How the agent is doing'), section(joinMrkdwn(figures)));
  blocks.push(divider(), header('How to use docs-agent'), section(guide));
  return { type: 'home', callback_id: 'docs_agent_home', blocks };
}

/** The App Home of someone who may not use the bot: why, and nothing else. */
export function homeRefusedView(why: Mrkdwn): Record<string, unknown> {
  return { type: 'home', callback_id: 'docs_agent_home', blocks: [header('docs-agent'), section(why)] };
}
