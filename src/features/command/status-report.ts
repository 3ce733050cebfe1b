import { AGENT_HOURLY_LIMIT } from '../../agent/schema.js';
import { type QualityFigures, qualityLines } from '../../blocks/figures.js';
import { duration } from '../../blocks/messages.js';
import { projectOfRecord } from '../../config/config.js';
import { type Block, context, fieldsSection, section } from '../../slack/blocks.js';
import { checkUrl, permalink } from '../../slack/links.js';
import {
  codeSpan,
  escapeMrkdwn,
  joinMrkdwn,
  link,
  type Mrkdwn,
  md,
  truncateText,
  userMention,
} from '../../slack/mrkdwn.js';
import type { FeedbackReason } from '../../store/feedback.js';

/** How many of the latest reasons given with a thumbs-down the status shows. */
export const REASONS_SHOWN = 3;
/** Most characters of one reason the status quotes; its thread has the whole story. */
const REASON_CHARS = 150;

export interface StatusFacts {
  /** Every project the deployment serves, the default first. */
  projects: string[];
  defaultProject: string;
  /** Instructions sent in the last hour, per project (null: the default project). */
  used: { projectId: string | null; count: number }[];
  activeJobs: number;
  pollerRunning: boolean;
  lastAgentSuccessAt: number | undefined;
  startedAt: number;
  /** Instances sharing the store (1 on SQLite). */
  instances: number;
  /** Pull requests opened and what became of them, and feedback on outcomes. */
  figures: QualityFigures;
  /**
   * What thumbs-down said to fix: the latest the viewer may read (at most {@link REASONS_SHOWN}),
   * and how many of the latest were left out because their jobs are private to others.
   */
  reasons: { shown: FeedbackReason[]; withheld: number };
  /** The workspace's address, for links to the reasons' threads; unknown: no links. */
  workspaceUrl: string | undefined;
  now: number;
}

const ago = (ms: number) => md`${duration(Math.max(0, ms))} ago`;

/** `/docs-agent status`: the projects' agent quota this hour and the bot's health. */
export function statusReport(facts: StatusFacts): { text: Mrkdwn; blocks: Block[] } {
  const usedBy = new Map<string, number>();
  for (const u of facts.used) {
    const id = projectOfRecord(u.projectId, facts.defaultProject);
    usedBy.set(id, (usedBy.get(id) ?? 0) + u.count);
  }
  const quota = facts.projects.map((p) => {
    const used = usedBy.get(p) ?? 0;
    const left = Math.max(0, AGENT_HOURLY_LIMIT - used);
    const mark =
      left === 0 ? md`:red_circle:` : left < 20 ? md`:large_orange_circle:` : md`:large_green_circle:`;
    return md`${mark} ${codeSpan(p)}: ${used} of ${AGENT_HOURLY_LIMIT} instructions used in the last hour (${left} left)`;
  });
  const poller = facts.pollerRunning
    ? facts.activeJobs === 1
      ? md`:large_green_circle: running, watching 1 active job`
      : md`:large_green_circle: running, watching ${facts.activeJobs} active jobs`
    : md`:red_circle: stopped (this instance is shutting down)`;
  const api =
    facts.lastAgentSuccessAt !== undefined
      ? md`:large_green_circle: ${ago(facts.now - facts.lastAgentSuccessAt)}`
      : md`:white_circle: none since this instance started ${ago(facts.now - facts.startedAt)}`;
  const doing = md`*How the agent is doing*\n${joinMrkdwn(qualityLines(facts.figures))}`;
  const reasons = reasonLines(facts);
  const lines = [
    md`*docs-agent status*`,
    md`*Agent quota* (counted from this bot’s own record)`,
    ...quota,
    md`*Poller:* ${poller}`,
    md`*Last successful agent API call:* ${api}`,
    doing,
    ...(reasons ? [reasons] : []),
  ];
  return {
    text: joinMrkdwn(lines),
    blocks: [
      section(md`*docs-agent status*`),
      section(md`*Agent quota* (counted from this bot’s own record)\n${joinMrkdwn(quota)}`),
      fieldsSection([
        md`*Poller*\n${poller}`,
        md`*Last successful agent API call*\n${api}`,
        md`*Instances*\n${facts.instances}`,
      ]),
      section(doing),
      ...(reasons ? [section(reasons)] : []),
      context(md`The agent API allows 100 new jobs and follow-ups per project per hour.`),
    ],
  };
}

/**
 * The latest things people said to fix, each quoted inert on one line with who said it, when,
 * and a link to the job's thread; undefined when there is nothing to show.
 */
function reasonLines(facts: StatusFacts): Mrkdwn | undefined {
  const { shown, withheld } = facts.reasons;
  if (shown.length === 0 && withheld === 0) return undefined;
  const lines = shown.map((r) => {
    const said = escapeMrkdwn(truncateText(r.reason.replace(/\s+/g, ' ').trim(), REASON_CHARS));
    const thread = r.job.threadTs
      ? checkUrl(permalink(facts.workspaceUrl, r.job.channelId, r.job.threadTs))
      : undefined;
    const where = thread ? md` · ${link(thread, 'thread')}` : md``;
    return md`• “${said}” (${userMention(r.userId)}, ${ago(facts.now - r.at)})${where}`;
  });
  if (withheld > 0)
    lines.push(md`• _${withheld} more on jobs asked for where you cannot see them: not shown here._`);
  return md`*What to fix, latest*\n${joinMrkdwn(lines)}`;
}
