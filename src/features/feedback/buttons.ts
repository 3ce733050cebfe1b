import { actionButton, actions, type Block } from '../../slack/blocks.js';
import type { FeedbackValue, FeedbackVote } from '../../store/feedback.js';

/** The action id of the feedback buttons under an outcome post. */
export const FEEDBACK_ACTION_ID = 'outcome_feedback';

/** A feedback button's value: `positive:<job id>:<run seq>`. */
export const feedbackButtonValue = ({ jobId, runSeq, value }: FeedbackVote): string =>
  `${value}:${jobId}:${runSeq}`;

/**
 * Reads a feedback button's value back; undefined when it is not one this app made. The value
 * names the vote and the outcome; what the press may do is read from the store, never the click.
 */
export function parseFeedbackButtonValue(raw: string): FeedbackVote | undefined {
  const match = /^(positive|negative):([1-9]\d{0,9}):([1-9]\d{0,9})$/.exec(raw);
  if (!match) return undefined;
  return { value: match[1] as FeedbackValue, jobId: Number(match[2]), runSeq: Number(match[3]) };
}

/** The action id of "Tell the agent what to fix", offered privately with a thumbs-down. */
export const WHAT_TO_FIX_ACTION_ID = 'feedback_what_to_fix';

/** The outcome a button is about: `<job id>:<run seq>`. */
export type OutcomeRef = Omit<FeedbackVote, 'value'>;

/** "Tell the agent what to fix", its value naming the outcome (`<job id>:<run seq>`). */
export const whatToFixButton = ({ jobId, runSeq }: OutcomeRef): Block =>
  actions(actionButton('Tell the agent what to fix', WHAT_TO_FIX_ACTION_ID, `${jobId}:${runSeq}`));

/** Reads a "what to fix" button's value back; undefined when it is not one this app made. */
export function parseOutcomeRef(raw: string): OutcomeRef | undefined {
  const match = /^([1-9]\d{0,9}):([1-9]\d{0,9})$/.exec(raw);
  if (!match) return undefined;
  return { jobId: Number(match[1]), runSeq: Number(match[2]) };
}

/**
 * Thumbs up and down under an outcome post (Block Kit `feedback_buttons`, inside a
 * `context_actions` block as Slack requires). Each button's value names the outcome. The kernel
 * puts it on every outcome post as the composition root hands it over (`belowOutcome` in
 * `jobs/outcomes.ts`), never importing this feature.
 */
export function feedbackBlock(jobId: number, runSeq: number): Record<string, unknown> {
  const button = (value: FeedbackValue, emoji: string, label: string) => ({
    text: { type: 'plain_text', text: emoji },
    accessibility_label: label,
    value: feedbackButtonValue({ jobId, runSeq, value }),
  });
  return {
    type: 'context_actions',
    elements: [
      {
        type: 'feedback_buttons',
        action_id: FEEDBACK_ACTION_ID,
        positive_button: button('positive', '👍', 'This outcome was useful'),
        negative_button: button('negative', '👎', 'This outcome was not useful'),
      },
    ],
  };
}
