/*
 * The trigger key of each way a job starts, and the run key of each source a run comes from: the
 * store's uniqueness keys, so a request Slack delivers again (a retried event, a second click, a
 * modal submitted again) finds what it already made. Keys recorded by one release are read by the
 * next (a step's execution id is read back from its key), so a key's text never changes (a test
 * pins each one). The outbox's keys are its kinds' (`delivery/kinds/`).
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

/**
 * What carried a run's instruction: a Slack message (a reply in the job's thread, one read back
 * from it, or the mention or direct message that started the job), a modal's submission, or a
 * Workflow Builder step's execution.
 */
export type RunSource =
  | { kind: 'message'; ts: string }
  | { kind: 'modal'; viewId: string }
  | { kind: 'step'; executionId: string };

/**
 * The run key of each source: what identifies a run within its job, so a source delivered again
 * finds the run it made. A message's key is its ts, which is how runs were told apart before they
 * had keys of their own.
 */
export const runKeys = {
  message: (ts: string) => ts,
  /** A modal's view: submitted once. */
  modal: (viewId: string) => `modal:${viewId}`,
  /** A step's execution id, the same on every re-delivery. */
  step: (executionId: string) => `${STEP_PREFIX}${executionId}`,
  /**
   * A job's first run that no message carried (a command, the shortcut's modal, a step, "Try
   * again"): one per job, recorded with the job, whose trigger key already makes it once.
   */
  first: () => 'first',
};

/** The run key of `source`. */
export function runKeyOf(source: RunSource): string {
  switch (source.kind) {
    case 'message':
      return runKeys.message(source.ts);
    case 'modal':
      return runKeys.modal(source.viewId);
    case 'step':
      return runKeys.step(source.executionId);
  }
}

/**
 * The run key of a run recorded without one: its message's ts, or `first` for a job's first run
 * that no message carried (a follow-up always comes with one or the other). Runs recorded before
 * runs had keys (schema version 14) are read with it.
 */
export const implicitRunKey = (messageTs: string | null): string =>
  messageTs === null ? runKeys.first() : runKeys.message(messageTs);
