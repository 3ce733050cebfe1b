/*
 * The trigger key of each way a job starts: the job's uniqueness key in the store, so a request
 * Slack delivers again (a retried event, a second click) finds the job it already made. Keys
 * recorded by one release are read by the next (a step's execution id is read back from its key),
 * so a key's text never changes (a test pins each one). The outbox's keys are its kinds'
 * (`delivery/kinds/`).
 */

const STEP_PREFIX = 'step:';

/** The trigger key of each way a job starts: the job's uniqueness key. */
export const triggerKeys = {
  /** A slash command: Slack's trigger id, the same on every re-delivery. */
  command: (triggerId: string) => `command:${triggerId}`,
  /** A mention of the bot: the message that mentioned it. */
  mention: (channelId: string, messageTs: string) => `mention:${channelId}:${messageTs}`,
  /** A direct message or an assistant pane message: the message. */
  direct: (channelId: string, messageTs: string) => `direct:${channelId}:${messageTs}`,
  /** The message shortcut's modal: its view, submitted once. */
  shortcut: (viewId: string) => `shortcut:${viewId}`,
  /** A Workflow Builder step: its execution id, so a re-delivery is a repeat. */
  step: (executionId: string) => `${STEP_PREFIX}${executionId}`,
  /** "Try again" on the job `jobId`: one per job, so a retry happens once. */
  retry: (jobId: number) => `retry:${jobId}`,
  /** The insert rehearsed before start-up says ready: never a job anyone asked for. */
  rehearsal: (instanceId: string, index: number) => `rehearsal:${instanceId}:${index}`,
};

/** The step execution a trigger key names, if a step's key it is. */
export function stepExecutionOfKey(triggerKey: string): string | undefined {
  return triggerKey.startsWith(STEP_PREFIX) ? triggerKey.slice(STEP_PREFIX.length) : undefined;
}
