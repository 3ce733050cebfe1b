/*
 * What an outbox item asks Slack to do. The store keeps these as JSON and the outbox delivers
 * them; their schemas and once-only keys live in the registry beside this file.
 */

/** An outcome of a run, or a notice that an instruction did not (surely) reach the agent. */
export type PostKind = 'outcome' | 'notice';

export interface PostAbout {
  kind: PostKind;
  /** The run's sequence number in its job. */
  run: number | null;
  /** ts of the Slack message that carried the instruction, for follow-ups. */
  source: string | null;
  /** When several runs merged into one result: their sequence numbers, comma-separated. */
  covers?: string;
  /** …and their source message ts, comma-separated (empty for the first instruction). */
  sources?: string;
}

/** What an outbox item asks Slack to do. */
export type OutboxPayload =
  | {
      type: 'post';
      channel: string;
      threadTs: string;
      text: string;
      /** Written into the message's metadata so a re-post after a crash can be detected. */
      eventType: string;
      /** Which run the post is about, also written into the metadata (nothing secret). */
      about?: PostAbout;
      /** Block Kit layout; `text` stays the notification and screen-reader fallback. */
      blocks?: unknown[];
    }
  | { type: 'update_root'; channel: string; ts: string }
  | { type: 'reaction'; channel: string; ts: string; name: string }
  | {
      type: 'respond';
      responseUrl: string;
      text: string;
      /** Where to say it instead once the response_url has expired. */
      fallback?: { channel: string; user: string };
    }
  | { type: 'ephemeral'; channel: string; user: string; threadTs: string | null; text: string }
  | ({ type: 'notify'; channel: string } & NotificationPost)
  | ({ type: 'direct'; user: string } & NotificationPost)
  | StepCompletion
  | StepWait;

/**
 * A Workflow Builder step's answer (`functions.completeSuccess` or `completeError`): the job the
 * step started, or why it did not start. Its once-only key is the step's execution id.
 */
export interface StepCompletion {
  type: 'complete_step';
  /** Slack's `function_execution_id`. */
  executionId: string;
  result: { job: number; channel: string; threadTs: string } | { error: string };
}

/**
 * A "Wait for a docs agent job" step: answered once the job's latest run has ended, or failed
 * at `deadline` (epoch ms), before Slack's own limit ends the step.
 */
export interface StepWait {
  type: 'await_job';
  executionId: string;
  job: number;
  deadline: number;
}

/**
 * A run's outcome told outside its thread: a top-level post in a notification channel
 * (`notify`), or a direct message to the requester (`direct`, its DM opened when delivered).
 */
export interface NotificationPost {
  text: string;
  /** Written into the message's metadata so a re-post after a crash can be detected. */
  eventType: string;
  /** More facts written into the metadata (the run, the outcome, the job's thread); nothing secret. */
  fields?: Record<string, string | number | null>;
  /** Block Kit layout; `text` stays the notification and screen-reader fallback. */
  blocks?: unknown[];
}
