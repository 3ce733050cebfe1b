/**
 * The store's records: jobs, their runs, and the outbox items that carry every Slack post; and
 * what callers ask the store to change of them, patches of records grouped into one atomic
 * change. All times are epoch milliseconds.
 */

import type { JobPhase } from '../domain/phases.js';
import type { JobPrivacy } from '../domain/privacy.js';

/**
 * Where a job was started: the slash command, an @mention, the message shortcut, a direct
 * message, or a Workflow Builder step.
 */
export type JobOrigin = 'command' | 'mention' | 'shortcut' | 'direct' | 'workflow';

export interface JobRecord {
  id: number;
  teamId: string;
  channelId: string;
  /**
   * ts of the thread's root message: the job's thread. The bot's own root message for a slash
   * command (null until posted); the existing message for a job started inside a conversation.
   */
  threadTs: string | null;
  /** ts of the bot's status card: the root itself for a command, a reply in the thread otherwise. */
  cardTs: string | null;
  origin: JobOrigin;
  /** The documentation project the job runs on; null means the deployment's default project. */
  projectId: string | null;
  /** Who may read what was asked for, from where it was asked (see `domain/privacy.ts`). */
  privacy: JobPrivacy;
  /**
   * A job asked for in the assistant pane: the channel the pane was open beside when the
   * instruction was accepted. The job's project comes from it, and every access check of the job
   * (its start, its follow-ups, "Try again") uses it, so the checks and the work see one channel
   * however the pane moves later. Null elsewhere, and in a pane open beside no channel.
   */
  contextChannelId: string | null;
  /** When set, the thread's messages before this ts are given to the agent as context. */
  contextTs: string | null;
  /** The status emoji the bot last put on the thread's root message. */
  rootReaction: string | null;
  /** The agent session status the bot last set on the job's thread (or Slack refused for good). */
  sessionStatus: string | null;
  requesterId: string;
  /** The instruction as the user typed it (Slack mrkdwn). */
  instruction: string;
  /** Unique per user action (slash command trigger id), so a repeat never makes a second job. */
  triggerKey: string;
  /** Slack's response_url for private replies to the requester, valid 30 minutes. */
  responseUrl: string | null;
  agentJobId: string | null;
  phase: JobPhase;
  /** Last status the agent API reported (may be a value the API added later). */
  agentStatus: string | null;
  prLink: string | null;
  /** Outcome of the latest finished run, shown on the root message. */
  lastOutcome: RunOutcome | null;
  repository: string | null;
  ref: string | null;
  model: string | null;
  /** Number of runs: the first instruction and each follow-up that reached the agent. */
  runCount: number;
  nextPollAt: number | null;
  /** Current backoff interval between polls. */
  pollIntervalMs: number;
  /** Consecutive failed polls, refused or not. */
  pollFailures: number;
  /** Consecutive polls refused with the admin key (401/403); any other poll resets it. */
  pollRefusals: number;
  /** When the current run was sent to the agent. */
  runStartedAt: number | null;
  lastError: string | null;
  /** Instance that accepted the job; it alone starts it while it is alive. */
  owner: string | null;
  /**
   * Until when (the store's clock) the owner may be inside a call to the agent API for the job:
   * nobody takes the job over before then, heartbeat or not. Null: no call under way.
   */
  ownerUntil: number | null;
  /** Instance polling the job right now, until {@link JobRecord.claimedUntil}. */
  claimedBy: string | null;
  claimedUntil: number | null;
  /**
   * When the retention sweep last erased what people wrote in the job (its instruction, run
   * prompts, response_url); null while they are kept. The job row and its thread stay.
   */
  erasedAt: number | null;
  /**
   * The run count at which someone pressed stop on the job's agent session (null: never). The
   * agent API cannot cancel a run: while this is still the run count, the run goes on unshown.
   */
  stoppedRun: number | null;
  createdAt: number;
  updatedAt: number;
}

/** A job known to be in one of the phases `S`. */
export type JobIn<S extends JobPhase> = JobRecord & { readonly phase: S };

export type RunKind = 'create' | 'follow_up';
/**
 * - `pending`: recorded, not yet checked or sent.
 * - `ready`: a follow-up checked and waiting to be sent (for its batch window, or for the job to exist).
 * - `sending`: the request is being made; after a crash its effect is unknown.
 * - `sent`: the agent accepted it.
 * - `failed`: refused or not sent; the user was told.
 * - `unknown`: sent and the answer lost; the user was told.
 */
export type RunState = 'pending' | 'ready' | 'sending' | 'sent' | 'failed' | 'unknown';

/** Terminal outcome of a run, as posted to the thread. */
export type RunOutcome =
  | 'completed_pr'
  | 'completed_no_changes'
  | 'failed'
  | 'archived'
  | 'gone'
  | 'stopped_watching';

export interface RunRecord {
  id: number;
  jobId: number;
  /** 1 for the first instruction, then one more per follow-up. */
  seq: number;
  kind: RunKind;
  /** Plain-text prompt sent to the agent. */
  prompt: string;
  authorId: string;
  /**
   * What identifies the run within its job: the run key of what carried its instruction
   * (`runKeys` in `domain/keys.ts`), so the same source delivered again finds this run. A
   * message's key is its ts.
   */
  runKey: string;
  /**
   * ts of the Slack message that carried the instruction, if a message did: what the bot reacts
   * to once the agent has the follow-up, and the source its posts' metadata names.
   */
  messageTs: string | null;
  state: RunState;
  error: string | null;
  outcome: RunOutcome | null;
  /** Instance that accepted the run; it alone sends it while it is alive. */
  owner: string | null;
  /** Until when (the store's clock) the owner may be sending the run; as {@link JobRecord.ownerUntil}. */
  ownerUntil: number | null;
  /** The author's workspace, when Slack named it (it differs from the job's in a shared channel). */
  teamId: string | null;
  createdAt: number;
  /**
   * When the run was counted against the hourly limits ({@link Store.reserveUse}); null until
   * then. A `failed` run (surely never reached the agent) no longer counts.
   */
  reservedAt: number | null;
  sentAt: number | null;
  outcomeAt: number | null;
}

export type NewJob = Pick<
  JobRecord,
  'teamId' | 'channelId' | 'requesterId' | 'instruction' | 'triggerKey' | 'responseUrl' | 'pollIntervalMs'
> &
  Partial<
    Pick<
      JobRecord,
      'owner' | 'origin' | 'projectId' | 'threadTs' | 'contextTs' | 'privacy' | 'contextChannelId'
    >
  > & {
    /**
     * The job this one is tried again in place of ("Try again"). In the same transaction as the
     * insert, it moves `from` → `to` (which must give up its thread), the new job takes its
     * thread and the emoji on the thread's root, and `enqueue` is queued (its card update). When
     * it is no longer in `from`, nothing is written.
     */
    replaces?: { jobId: number; from: JobPhase; to: JobPhase; enqueue: NewOutboxItem[] };
  };

export type NewRun = Pick<RunRecord, 'kind' | 'prompt' | 'authorId' | 'messageTs'> & {
  /**
   * The run key of a source that is no Slack message (`runKeyOf` in `domain/keys.ts`). Left out,
   * the run's key is its message's ts, or for a job's first run that no message carried `first`.
   */
  runKey?: string;
  jobId?: number;
  owner?: string | null;
  teamId?: string | null;
};

/** A follow-up: carried by a message (its key is the message's ts), or keyed by another source. */
export type NewFollowUp = NewRun & ({ messageTs: string } | { runKey: string });

/**
 * What an outbox item asks Slack to do, as the store keeps it: JSON whose `type` names its kind
 * (stored beside it, for the indexes and the order of a job's posts). The store reads nothing
 * else of it: each kind of item (`delivery/kinds/`) writes its payload, and reads it back with
 * its schema.
 */
export interface StoredPayload {
  type: string;
  [field: string]: unknown;
}

/** An item to queue; `P`, its payload, is the writer's (the store keeps any {@link StoredPayload}). */
export interface NewOutboxItem<P extends StoredPayload = StoredPayload> {
  jobId: number | null;
  /** Unique: enqueueing the same key twice keeps the first. */
  dedupeKey: string | null;
  payload: P;
}

export interface OutboxItem<P extends StoredPayload = StoredPayload> extends NewOutboxItem<P> {
  id: number;
  attempts: number;
  nextAttemptAt: number;
  /** Set when an attempt starts; a row with this set and no delivery may already be in Slack. */
  startedAt: number | null;
  deliveredAt: number | null;
  deadAt: number | null;
  lastError: string | null;
  /** Instance delivering the item right now, until {@link OutboxItem.claimedUntil}. */
  claimedBy: string | null;
  claimedUntil: number | null;
  createdAt: number;
}

export type JobPatch = Partial<Omit<JobRecord, 'id' | 'createdAt' | 'teamId' | 'triggerKey' | 'owner'>>;
export type RunPatch = Partial<
  Pick<RunRecord, 'state' | 'error' | 'outcome' | 'sentAt' | 'outcomeAt' | 'prompt'>
>;

export type OutboxPatch = Partial<
  Pick<
    OutboxItem,
    | 'attempts'
    | 'nextAttemptAt'
    | 'startedAt'
    | 'deliveredAt'
    | 'deadAt'
    | 'lastError'
    | 'claimedBy'
    | 'claimedUntil'
  >
>;

/** Work a stopped instance left half done, now owned by the instance that took it over. */
export interface Orphans {
  /** Jobs left `accepted`, `posting` or `creating`. */
  jobs: JobRecord[];
  /** Follow-ups left `pending` (never sent) or `sending` (sent, answer unknown). */
  runs: RunRecord[];
}

/** One atomic change: a job patch, optionally a run patch, and outbox items to enqueue. */
export interface Change {
  jobId: number;
  job?: JobPatch;
  run?: { id: number; patch: RunPatch };
  enqueue?: NewOutboxItem[];
  /** Further runs to patch in the same change. */
  runs?: { id: number; patch: RunPatch }[];
  /** Increment the job's run count (a run was accepted by the agent). */
  incrementRunCount?: boolean;
  /**
   * Apply only if the job still is as the caller saw it: a poll answer that arrives after a
   * follow-up started a new run must not close that run.
   */
  expect?: { phase: JobPhase; runCount: number };
  /**
   * Apply only if this run is still in one of these states: an edit of a reply waiting in its
   * batch must not change (or withdraw) one that a batch has meanwhile taken to send.
   */
  expectRun?: { id: number; states: readonly RunState[] };
  /**
   * Apply only while `instanceId` still owns the job (`job`) and each of `runIds`: what an
   * instance learnt in a call it made for work that was meanwhile taken over is not written.
   */
  owner?: { instanceId: string; job?: boolean; runIds?: readonly number[] };
}
