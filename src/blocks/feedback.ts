import { type FeedbackValue, feedbackButtonValue } from '../domain/feedback.js';
import { type Mrkdwn, md } from '../slack/mrkdwn.js';

/** The action id of the feedback buttons under an outcome post. */
export const FEEDBACK_ACTION_ID = 'outcome_feedback';

/**
 * Thumbs up and down under an outcome post (Block Kit `feedback_buttons`, inside a
 * `context_actions` block as Slack requires). Each button's value names the outcome.
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

const shown: Record<FeedbackValue, Mrkdwn> = { positive: md`:thumbsup:`, negative: md`:thumbsdown:` };

/** What the person who pressed a feedback button is told, privately. */
export const feedbackText = {
  recorded: (value: FeedbackValue) =>
    md`${shown[value]} Thanks: your feedback on this outcome is recorded. Press the other one to change it.`,
  unchanged: (value: FeedbackValue) =>
    md`${shown[value]} Your feedback on this outcome was already recorded.`,
  unknown: () =>
    md`:grey_question: I could not find the outcome this feedback is about, so it was not recorded.`,
  notRecorded: () =>
    md`:warning: I could not record your feedback just now. Please press it again in a moment.`,
};
