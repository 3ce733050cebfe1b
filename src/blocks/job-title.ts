import { mrkdwnToPlain, truncateText } from '../slack/mrkdwn.js';

/**
 * A job's instruction as a one-line plain-text title (the assistant pane's thread, the agent
 * session): Slack shows titles as given, so mentions and links are made readable, whitespace
 * and control characters collapse to single spaces, and the length is bounded. Nothing once the
 * instruction was erased by retention.
 */
export function jobTitle(job: { instruction: string; erasedAt: number | null }, max: number): string {
  if (job.erasedAt !== null) return '';
  const line = mrkdwnToPlain(job.instruction)
    .replace(/[\s\p{Cc}]+/gu, ' ')
    .trim();
  return truncateText(line, max);
}
