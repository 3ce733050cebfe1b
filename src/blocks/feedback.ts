import { type FeedbackValue, feedbackButtonValue } from '../domain/feedback.js';

/** The action id of the feedback buttons under an outcome post. */
export const FEEDBACK_ACTION_ID = 'outcome_feedback';

/**
 * Thumbs up and down under an outcome post (Block Kit `feedback_buttons`, inside a
 * `context_actions` block as Slack requires). Each button's value names the outcome. Rendered
 * with every outcome post, below the features; a press is the feedback feature's
 * (`features/feedback/`).
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
