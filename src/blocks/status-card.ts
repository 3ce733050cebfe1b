import { mayRetry, STILL_STARTING, TAKES_FOLLOW_UPS } from '../domain/phases.js';
import {
  actionButton,
  actions,
  type Block,
  context,
  fieldsSection,
  LIMITS,
  linkButton,
  section,
} from '../slack/blocks.js';
import { checkPullRequestUrl } from '../slack/links.js';
import { codeSpan, type Mrkdwn, md, slackDate, truncateMrkdwn } from '../slack/mrkdwn.js';
import type { JobRecord, PullRequestRecord, RunOutcome } from '../store/types.js';
import {
  askedBy,
  cardText,
  duration,
  followUpHint,
  outcomeText,
  quoteInstruction,
  type RenderHints,
  statusLine,
} from './messages.js';
import { pullRequestReaction, pullRequestStatus } from './pull-requests.js';

/** Action id of the card's "Try again" button; its value is the job's id. */
export const RETRY_ACTION_ID = 'retry_job';

/** The "Try again" button, on a job whose start or latest run failed (see {@link mayRetry}). */
function retryButton(job: JobRecord): Block[] {
  return mayRetry(job) ? [actions(actionButton('Try again', RETRY_ACTION_ID, String(job.id)))] : [];
}

/** The "View pull request" button, only for an address on the trusted hosts. */
function pullRequestButton(job: JobRecord, hints: RenderHints): Block[] {
  const url = checkPullRequestUrl(job.prLink, hints.prLinkHosts);
  return url ? [actions(linkButton('View pull request', url, 'view_pull_request', true))] : [];
}

/**
 * The status card: the job's root message (or, for a job started inside a conversation, the
 * bot's first reply there), re-rendered on every change. `text` is the notification and
 * screen-reader fallback. `pullRequest`: the job's pull request as followed, when it is.
 */
export function statusCard(
  job: JobRecord,
  now: number,
  hints: RenderHints,
  pullRequest?: PullRequestRecord,
): { text: Mrkdwn; blocks: Block[] } {
  const fields: Mrkdwn[] = [md`*Status*\n${statusLine(job, hints)}`];
  if (job.runCount > 0) fields.push(md`*Runs*\n${job.runCount}`);
  if (job.repository) {
    const where = job.ref
      ? md`${codeSpan(job.repository)} on ${codeSpan(job.ref)}`
      : codeSpan(job.repository);
    fields.push(md`*Repository*\n${where}`);
  }
  if (job.model) fields.push(md`*Model*\n${codeSpan(job.model)}`);
  fields.push(md`*Elapsed*\n${duration(Math.max(0, now - job.createdAt))} as of ${slackDate(now, '{time}')}`);
  if (job.agentJobId) fields.push(md`*Job*\n${codeSpan(job.agentJobId)}`);
  const followed = pullRequestStatus(pullRequest);
  if (followed) fields.push(md`*Pull request*\n${followed}`);

  const blocks: Block[] = [
    section(md`:memo: ${askedBy(job)}:\n${quoteInstruction(job.instruction, 2_500)}`),
    fieldsSection(fields),
    ...pullRequestButton(job, hints),
    ...retryButton(job),
  ];
  if (TAKES_FOLLOW_UPS.has(job.phase)) blocks.push(context(followUpHint(hints)));
  return { text: truncateMrkdwn(cardText(job, hints), LIMITS.messageText), blocks };
}

/**
 * The emoji on the thread's root that mirrors the card: working, done, failed (or none), and once
 * the job's pull request was merged or closed, which. While the job is being started or worked on
 * and Slack shows its thread's agent session (`sessionShown`), the session's own indicator says
 * so: no emoji, which spares two emoji calls a run (Slack allows `reactions.remove` 20 a minute).
 * A root that is the status card itself (a command's thread) gets none: its own text says all of
 * it, and Slack allows `reactions.add` 50 a minute in a workspace.
 */
export function statusReaction(
  job: JobRecord,
  pullRequest?: PullRequestRecord,
  sessionShown = false,
): string | null {
  if (job.threadTs !== null && cardTsOf(job) === job.threadTs) return null;
  const working = sessionShown ? null : 'hourglass_flowing_sand';
  if (STILL_STARTING.has(job.phase)) return working;
  switch (job.phase) {
    case 'active':
      return working;
    case 'not_started':
    case 'gone':
      return 'x';
    case 'start_unknown':
      return 'grey_question';
    // The job that replaced it in the thread owns the root's emoji now.
    case 'retried':
      return null;
    case 'idle': {
      const ended = pullRequestReaction(pullRequest);
      if (ended) return ended;
      switch (job.lastOutcome) {
        case 'completed_pr':
        case 'completed_no_changes':
        case null:
          return 'white_check_mark';
        case 'failed':
        case 'gone':
          return 'x';
        case 'archived':
          return 'file_cabinet';
        case 'stopped_watching':
          return 'zzz';
      }
    }
  }
}

/** Every emoji {@link statusReaction} can put on a root. */
export const STATUS_REACTIONS = [
  'hourglass_flowing_sand',
  'x',
  'grey_question',
  'white_check_mark',
  'file_cabinet',
  'zzz',
  'large_purple_circle',
  'no_entry_sign',
];

/** An outcome post: the same words as its text fallback, and the pull request one click away. */
export function outcomePost(
  outcome: RunOutcome,
  job: JobRecord,
  notify: string[],
  maxAgeMs: number,
  hints: RenderHints,
): { text: Mrkdwn; blocks: Block[] } {
  const text = truncateMrkdwn(outcomeText(outcome, job, notify, maxAgeMs, hints), LIMITS.messageText);
  const blocks: Block[] = [section(text)];
  if (outcome === 'completed_pr') blocks.push(...pullRequestButton(job, hints));
  return { text, blocks };
}

/**
 * The status card's ts. A command job's card is its root, also for jobs recorded by an earlier
 * version that did not record the card (during a rolling upgrade).
 */
export const cardTsOf = (job: JobRecord): string | null =>
  job.cardTs ?? (job.origin === 'command' ? job.threadTs : null);
