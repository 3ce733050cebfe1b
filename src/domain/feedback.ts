/**
 * Feedback on an outcome post (Block Kit `feedback_buttons`): one vote per person and outcome,
 * an outcome being one run of a job. The button's value names the vote and the outcome; what
 * it may do is read from the store, never from the click.
 */
export type FeedbackValue = 'positive' | 'negative';

export const FEEDBACK_VALUES: readonly FeedbackValue[] = ['positive', 'negative'];

/** The outcome a vote is about, and the vote. */
export interface FeedbackVote {
  jobId: number;
  runSeq: number;
  value: FeedbackValue;
}

/** A feedback button's value: `positive:<job id>:<run seq>`. */
export const feedbackButtonValue = ({ jobId, runSeq, value }: FeedbackVote): string =>
  `${value}:${jobId}:${runSeq}`;

/** Reads a feedback button's value back; undefined when it is not one this app made. */
export function parseFeedbackButtonValue(raw: string): FeedbackVote | undefined {
  const match = /^(positive|negative):([1-9]\d{0,9}):([1-9]\d{0,9})$/.exec(raw);
  if (!match) return undefined;
  return { value: match[1] as FeedbackValue, jobId: Number(match[2]), runSeq: Number(match[3]) };
}

/** Votes counted so far, by value. */
export type FeedbackTotals = Record<FeedbackValue, number>;
