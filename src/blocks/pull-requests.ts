import {
  codeSpan,
  escapeMrkdwn,
  type Mrkdwn,
  md,
  slackDate,
  truncateText,
  userMention,
} from '../slack/mrkdwn.js';
import type { JobRecord, PullRequestRecord } from '../store/types.js';
import { pullRequestLink, type RenderHints } from './messages.js';

/*
 * What the bot says of a pull request it follows: on the status card, and once in the thread when
 * it is merged or closed. A title and a login come from the host: a title is escaped, a login
 * shown as a code span (text, never a link or a mention).
 */

/** Most characters of a title the card shows. */
const TITLE_CHARS = 150;

const title = (pr: PullRequestRecord) =>
  pr.title ? md`: ${escapeMrkdwn(truncateText(pr.title, TITLE_CHARS))}` : md``;

const when = (at: number | null) =>
  at === null ? md`` : md` ${slackDate(at, '{date_short_pretty} at {time}')}`;

/** Whether the pull request was merged or closed: nothing follows it any more. */
export const pullRequestEnded = (pr: PullRequestRecord | undefined): boolean =>
  pr?.following === 'ended' && (pr.state === 'merged' || pr.state === 'closed');

/**
 * The card's line on the job's pull request; undefined while there is nothing to say (none
 * followed, or the host has not answered yet).
 */
export function pullRequestStatus(pr: PullRequestRecord | undefined): Mrkdwn | undefined {
  if (!pr) return undefined;
  switch (pr.following) {
    case 'other_host':
      return md`:white_circle: Not followed: its host is not the one this bot reads`;
    case 'missing':
      return md`:warning: Could not follow: the host no longer finds it (deleted, or out of this bot's reach)`;
    case 'refused':
      return md`:warning: Could not follow: the host refused this bot's access`;
    case 'replaced':
      return undefined;
    case 'expired':
      return md`:zzz: Open when last checked; no longer followed (two weeks after it was opened)${title(pr)}`;
    case 'following':
    case 'ended':
      break;
  }
  switch (pr.state) {
    case null:
      return undefined;
    case 'open':
      return md`:large_green_circle: Open${title(pr)}`;
    case 'merged':
      return pr.mergedBy
        ? md`:large_purple_circle: Merged by ${codeSpan(pr.mergedBy)}${when(pr.endedAt)}`
        : md`:large_purple_circle: Merged${when(pr.endedAt)}`;
    case 'closed':
      return md`:no_entry_sign: Closed without merging${when(pr.endedAt)}`;
  }
}

/** The root's emoji once the job's pull request was merged or closed; undefined otherwise. */
export function pullRequestReaction(pr: PullRequestRecord | undefined): string | undefined {
  if (!pullRequestEnded(pr)) return undefined;
  return pr?.state === 'merged' ? 'large_purple_circle' : 'no_entry_sign';
}

/** What the requester is told once in the thread when the pull request was merged or closed. */
export function pullRequestEndedText(
  pr: PullRequestRecord,
  job: Pick<JobRecord, 'requesterId'>,
  hints: Pick<RenderHints, 'prLinkHosts'>,
): Mrkdwn {
  const which = pullRequestLink(pr.url, hints, 'The pull request');
  if (pr.state === 'merged')
    return pr.mergedBy
      ? md`${userMention(job.requesterId)} :large_purple_circle: ${which} was merged by ${codeSpan(pr.mergedBy)}.`
      : md`${userMention(job.requesterId)} :large_purple_circle: ${which} was merged.`;
  return md`${userMention(job.requesterId)} :no_entry_sign: ${which} was closed without being merged. Reply here if the docs still need the change.`;
}
