import { duration, statusLine } from '../jobs/messages.js';
import { cardTsOf } from '../jobs/outbox-items.js';
import { type Block, context, divider, header, LIMITS, section } from '../slack/blocks.js';
import { escapeMrkdwn, mrkdwnToPlain } from '../slack/mrkdwn.js';
import { permalink } from '../slack/permalink.js';
import { truncateText } from '../slack/truncate.js';
import type { JobRecord } from '../store/types.js';

/** How many jobs a list shows. */
export const LIST_LIMIT = 10;
/** How many jobs the App Home shows. */
export const HOME_LIMIT = 15;

export interface ListContext {
  /** The workspace's address, for thread permalinks (auth.test `url`). */
  workspaceUrl: string | undefined;
  now: number;
}

/** The instruction as a short, safe label: plain text, no markup that could break a link. */
const label = (instruction: string) =>
  escapeMrkdwn(truncateText(mrkdwnToPlain(instruction).replace(/\s+/g, ' ').trim(), 80)).replace(
    /\|/g,
    '/',
  ) || '(no instruction)';

/** One job in a list: its instruction linking to its thread, status, age, and pull request. */
export function jobLine(job: JobRecord, { workspaceUrl, now }: ListContext): string {
  const card = cardTsOf(job);
  const link = card && job.threadTs ? permalink(workspaceUrl, job.channelId, card, job.threadTs) : undefined;
  const title = link ? `*<${link}|${label(job.instruction)}>*` : `*${label(job.instruction)}*`;
  const parts = [statusLine(job), `<#${job.channelId}>`, `${duration(Math.max(0, now - job.createdAt))} ago`];
  if (job.prLink) parts.push(`<${job.prLink}|pull request>`);
  return `${title}\n${parts.join(' · ')}`;
}

/** `/docs-agent list` (the user's jobs) and `/docs-agent list channel` (this channel's). */
export function jobListMessage(
  jobs: JobRecord[],
  scope: { kind: 'mine' } | { kind: 'channel'; channelId: string },
  ctx: ListContext,
): { text: string; blocks: Block[] } {
  const title =
    scope.kind === 'mine' ? 'Your recent docs agent jobs' : `Recent docs agent jobs in <#${scope.channelId}>`;
  if (jobs.length === 0) {
    const none =
      scope.kind === 'mine'
        ? ':information_source: You have not started any docs agent jobs yet. Try `/docs-agent <instruction>` or mention @docs-agent.'
        : ':information_source: No docs agent jobs have been started in this channel yet.';
    return { text: none, blocks: [section(none)] };
  }
  const lines = jobs.slice(0, LIST_LIMIT).map((job) => jobLine(job, ctx));
  const text = truncateText(`${title}:\n${lines.join('\n')}`, LIMITS.messageText);
  return {
    text,
    blocks: [
      section(`*${title}*`),
      ...lines.map((line) => section(line)),
      context(
        scope.kind === 'mine'
          ? 'Newest first. `/docs-agent list channel` shows this channel’s jobs.'
          : 'Newest first. `/docs-agent list` shows your own jobs.',
      ),
    ],
  };
}

/** The App Home tab: the person's recent jobs and how to use the bot. */
export function homeView(jobs: JobRecord[], guide: string, ctx: ListContext): Record<string, unknown> {
  const blocks: Block[] = [header('Your docs agent jobs')];
  if (jobs.length === 0) {
    blocks.push(section('You have not started any jobs yet. Here is how:'));
  } else {
    for (const job of jobs.slice(0, HOME_LIMIT)) blocks.push(section(jobLine(job, ctx)));
    blocks.push(
      context(`Updated <!date^${Math.floor(ctx.now / 1000)}^{date_short_pretty} at {time}|just now>`),
    );
  }
  blocks.push(divider(), header('How to use docs-agent'), section(guide));
  return { type: 'home', callback_id: 'docs_agent_home', blocks };
}
