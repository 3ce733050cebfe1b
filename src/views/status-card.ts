import {
  duration,
  type FollowUpHints,
  followUpHint,
  outcomeText,
  quoteInstruction,
  rootText,
  statusLine,
} from '../jobs/messages.js';
import { actions, type Block, context, fieldsSection, LIMITS, linkButton, section } from '../slack/blocks.js';
import { truncateText } from '../slack/truncate.js';
import type { JobRecord, RunOutcome } from '../store/types.js';

const code = (text: string) => `\`${text.replace(/`/g, "'")}\``;
const slackTime = (at: number) => {
  const fallback = `${new Date(at).toISOString().slice(11, 16)} UTC`;
  return `<!date^${Math.floor(at / 1000)}^{time}|${fallback}>`;
};

/**
 * The status card: the job's root message (or, for a job started inside a conversation, the
 * bot's first reply there), re-rendered on every change. `text` is the notification and
 * screen-reader fallback.
 */
export function statusCard(
  job: JobRecord,
  now: number,
  hints: FollowUpHints,
): { text: string; blocks: Block[] } {
  const fields = [`*Status*\n${statusLine(job)}`];
  if (job.runCount > 0) fields.push(`*Runs*\n${job.runCount}`);
  if (job.repository) {
    const where = job.ref ? `${code(job.repository)} on ${code(job.ref)}` : code(job.repository);
    fields.push(`*Repository*\n${where}`);
  }
  if (job.model) fields.push(`*Model*\n${code(job.model)}`);
  fields.push(`*Elapsed*\n${duration(Math.max(0, now - job.createdAt))} as of ${slackTime(now)}`);
  if (job.agentJobId) fields.push(`*Job*\n${code(job.agentJobId)}`);

  const blocks: Block[] = [
    section(
      `:memo: <@${job.requesterId}> asked the docs agent:\n${quoteInstruction(job.instruction, 2_500)}`,
    ),
    fieldsSection(fields),
  ];
  if (job.prLink)
    blocks.push(actions(linkButton('View pull request', job.prLink, 'view_pull_request', true)));
  if (job.phase === 'active' || job.phase === 'idle') blocks.push(context(followUpHint(hints)));
  return { text: truncateText(rootText(job, hints), LIMITS.messageText), blocks };
}

/** The emoji on the thread's root that mirrors the card: working, done, failed (or none). */
export function statusReaction(job: JobRecord): string | null {
  switch (job.phase) {
    case 'accepted':
    case 'posting':
    case 'creating':
    case 'active':
      return 'hourglass_flowing_sand';
    case 'not_started':
    case 'gone':
      return 'x';
    case 'start_unknown':
      return 'grey_question';
    case 'idle':
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

/** Every emoji {@link statusReaction} can put on a root. */
export const STATUS_REACTIONS = [
  'hourglass_flowing_sand',
  'x',
  'grey_question',
  'white_check_mark',
  'file_cabinet',
  'zzz',
];

/** An outcome post: the same words as its text fallback, and the pull request one click away. */
export function outcomePost(
  outcome: RunOutcome,
  job: JobRecord,
  notify: string[],
  maxAgeMs: number,
): { text: string; blocks: Block[] } {
  const text = truncateText(outcomeText(outcome, job, notify, maxAgeMs), LIMITS.messageText);
  const blocks: Block[] = [section(text)];
  if (outcome === 'completed_pr' && job.prLink)
    blocks.push(actions(linkButton('View pull request', job.prLink, 'view_pull_request', true)));
  return { text, blocks };
}
