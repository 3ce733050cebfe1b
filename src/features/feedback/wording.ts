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
  /** Said with a thumbs-down, above the button that opens the modal. */
  offerWhatToFix: () => md`Tell the agent what to fix, and it will try again in the job’s thread.`,
};

/**
 * The "what to fix" modal's texts. Errors under its input are plain text (Slack parses no markup
 * there); the refusals are the vote's, without their emoji.
 */
export const whatToFixText = {
  title: 'What to fix',
  label: 'What should the agent fix?',
  placeholder: 'e.g. The example uses the old endpoint; use /v2/jobs and show the response',
  explained: () =>
    md`Sent to the agent as a follow-up from you, shown in the job’s thread, and kept with your :thumbsdown: for the team’s feedback figures.`,
  sent: () =>
    md`:speech_balloon: Sent. It is shown in the job’s thread once the agent takes it, and the outcome is posted there.`,
  notUnderstood: () => 'I could not read this form. Close it and press the button again.',
  empty: () => 'Write what the agent should fix.',
  tooLong: (length: number, max: number) =>
    `That is ${length.toLocaleString('en-US')} characters; the limit is ${max.toLocaleString('en-US')}. Shorten it, or reply in the job’s thread in parts.`,
  unknown: () => 'I could not find the outcome this is about, so nothing was sent.',
  notRecorded: () => 'I could not record this just now, so nothing was sent. Please try again in a moment.',
  notCounted: (reason: RefusalReason) =>
    `${NOT_COUNTED[reason].replace(/^:[a-z_]+: /, '')} Nothing was sent to the agent.`,
};
