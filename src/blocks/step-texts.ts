import { type Mrkdwn, md } from '../slack/mrkdwn.js';

/*
 * What a Workflow Builder step says when it cannot do its work. Slack shows a step's error as
 * plain text in the workflow's activity; these are converted to plain text when queued, like the
 * refusals a person gets from the other surfaces (which a step gives in their own words).
 */
export const stepText = {
  notUnderstood: (): Mrkdwn =>
    md`:warning: I could not read this step's inputs, so nothing was started. Check the step's settings in Workflow Builder.`,
  noInstruction: (): Mrkdwn =>
    md`:information_source: The step's instruction is empty, so nothing was started. Give the step what the docs agent should do.`,
  direct: (): Mrkdwn =>
    md`:information_source: Jobs run in channels, where everyone can follow the thread. Pick a channel for the step, so nothing was started.`,
  unknownProject: (): Mrkdwn =>
    md`:no_entry: This docs agent does not serve the documentation project the step names, so nothing was started. Leave the project empty to use the channel's, or ask an admin which projects it serves.`,
  threadHasJob: (): Mrkdwn =>
    md`:information_source: The message the step replies under already has a docs agent job, so nothing was started: reply in that thread to send it a follow-up.`,
};

/** What a "Wait for a docs agent job" step says when it ends without an outcome: plain text. */
export const waitText = {
  noSuchJob: () =>
    'No docs agent job with that id was started by a workflow, so there is nothing to wait for. Use the job id output of the "Start a docs agent job" step.',
  neverStarted: (link: string | undefined) =>
    `The docs agent job did not start, or it is not known whether it did.${link ? ` Its thread says why: ${link}` : ''}`,
  stillRunning: (minutes: number, link: string | undefined) =>
    `The docs agent job is still working after ${minutes} minutes, and Slack ends a workflow step after 15. Its outcome will be posted in its thread${link ? `: ${link}` : '.'}`,
};
