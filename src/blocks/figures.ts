import { projectOfRecord } from '../config/config.js';
import { codeSpan, type Mrkdwn, md } from '../slack/mrkdwn.js';
import type { FeedbackStore, FeedbackTotals } from '../store/feedback.js';
import type { PullRequestSummary, PullRequestsStore } from '../store/types.js';
import { duration } from './messages.js';

/**
 * How the agent is doing, for the team: the pull requests its jobs opened and what became of them,
 * per project, and the feedback on its outcomes. `/docs-agent status` and the App Home show the
 * same lines, so the two never disagree.
 */
export interface QualityFigures {
  feedback: FeedbackTotals;
  pullRequests: readonly PullRequestSummary[];
  /** The project jobs recorded without one ran on. */
  defaultProject: string;
  /** Whether pull requests are followed to their end (`GITHUB_TOKEN` set). */
  following: boolean;
}

const plural = (n: number, one: Mrkdwn, many: Mrkdwn) => md`${n} ${n === 1 ? one : many}`;

/** One project's pull requests: opened, and what became of them so far. */
function projectLine(pr: PullRequestSummary, defaultProject: string, following: boolean): Mrkdwn {
  const project = codeSpan(projectOfRecord(pr.projectId, defaultProject));
  const opened = plural(pr.opened, md`pull request opened`, md`pull requests opened`);
  if (!following) return md`${project}: ${opened}`;
  const median =
    pr.medianMergeMs === null ? md`` : md` · median time to merge ${duration(Math.max(0, pr.medianMergeMs))}`;
  return md`${project}: ${opened} · ${pr.merged} merged · ${pr.closedUnmerged} closed unmerged · ${pr.stillOpen} still open${median}`;
}

/** The figures as lines, pull requests first (one per project, the busiest first), then feedback. */
export function qualityLines(figures: QualityFigures): Mrkdwn[] {
  // Rows of one project under several ids of record (none, and the default's own id) add up.
  const byProject = new Map<string, PullRequestSummary>();
  for (const pr of figures.pullRequests) {
    const id = projectOfRecord(pr.projectId, figures.defaultProject);
    const seen = byProject.get(id);
    byProject.set(
      id,
      seen
        ? {
            projectId: id,
            opened: seen.opened + pr.opened,
            merged: seen.merged + pr.merged,
            closedUnmerged: seen.closedUnmerged + pr.closedUnmerged,
            stillOpen: seen.stillOpen + pr.stillOpen,
            // Two medians do not make one: none is shown rather than a figure nobody measured.
            medianMergeMs:
              seen.medianMergeMs === null
                ? pr.medianMergeMs
                : pr.medianMergeMs === null
                  ? seen.medianMergeMs
                  : null,
          }
        : { ...pr, projectId: id },
    );
  }
  const projects = [...byProject.values()].sort((a, b) => b.opened - a.opened);
  const lines = projects.map((pr) => projectLine(pr, figures.defaultProject, figures.following));
  if (projects.length === 0) lines.push(md`No pull requests opened yet.`);
  if (!figures.following)
    lines.push(md`_Pull requests are not followed to their merge: set GITHUB_TOKEN to follow them._`);
  const { positive, negative, reasons } = figures.feedback;
  lines.push(
    md`Feedback on outcomes: :thumbsup: ${positive}  :thumbsdown: ${negative} (${reasons} said what to fix)`,
  );
  return lines;
}

/** What the figures are read from: the store's totals, and whether pull requests are followed. */
export interface FiguresSource {
  store: Pick<FeedbackStore, 'feedbackTotals'> & Pick<PullRequestsStore, 'pullRequestSummaries'>;
  defaultProject: string;
  following: boolean;
}

/** Reads the figures, for status and the App Home alike. */
export async function readQualityFigures(source: FiguresSource): Promise<QualityFigures> {
  const [feedback, pullRequests] = await Promise.all([
    source.store.feedbackTotals(),
    source.store.pullRequestSummaries(),
  ]);
  return { feedback, pullRequests, defaultProject: source.defaultProject, following: source.following };
}
