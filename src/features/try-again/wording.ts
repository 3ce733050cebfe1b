import { md } from '../../slack/mrkdwn.js';

/** What the person who clicked "Try again" is told, privately, when it starts nothing of itself. */
export const tryAgainText = {
  notRetryable: () =>
    md`:information_source: This job cannot be tried again: it is no longer one whose start or latest run failed. Nothing was started.`,
};
