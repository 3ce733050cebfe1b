import type { RefusalReason } from '../../access/access-policy.js';
import { type Mrkdwn, md } from '../../slack/mrkdwn.js';
import type { FeedbackValue } from '../../store/feedback.js';

const shown: Record<FeedbackValue, Mrkdwn> = { positive: md`:thumbsup:`, negative: md`:thumbsdown:` };

/**
 * Why a press was not counted: the refusals a person would get for an instruction there (see
 * `blocks/refusal-texts.ts`), said of a vote. Hourly limits never refuse a vote.
 */
const NOT_COUNTED: Record<RefusalReason, Mrkdwn> = {
  team: md`:no_entry: This docs agent serves another Slack workspace or organisation, so your feedback was not counted. Only people it serves rate its outcomes.`,
  channel: md`:no_entry: The docs agent is not enabled in this channel, so your feedback was not counted. Ask an admin which channels it serves.`,
  direct: md`:no_entry: The docs agent takes no instructions by direct message here, so your feedback on this outcome was not counted.`,
  user: md`:no_entry: You are not on the list of people who may instruct the docs agent, so your feedback was not counted. Ask an admin to add you.`,
  guest: md`:no_entry: Guest accounts cannot instruct the docs agent, nor rate its outcomes, so your feedback was not counted.`,
  unverified: md`:hourglass: Slack could not confirm who you are just now, so your feedback was not counted. Please press it again in a moment.`,
  rate: md`:no_entry: Your feedback was not counted.`,
  project_rate: md`:no_entry: Your feedback was not counted.`,
};

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
  /** A press by someone who may not instruct the agent where the job was asked: why it does not count. */
  notCounted: (reason: RefusalReason) => NOT_COUNTED[reason],
};
