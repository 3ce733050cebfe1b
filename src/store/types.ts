/**
 * The store: the bot's only record of which Slack thread belongs to which agent job (the agent
 * API has no list endpoint). Async so an implementation on a database server can replace the
 * embedded SQLite one without touching callers. All times are epoch milliseconds.
 *
 * This module is the store's one door: outside `src/store`, every record and role is imported
 * from here (the feature store areas' own stored types from their area); inside, each module
 * imports the file that defines what it uses. The job's phases and privacy are the domain's
 * (`domain/phases.ts`, `domain/privacy.ts`), imported from there.
 */

export type {
  AssistantThreadsStore,
  HomeViewsStore,
  ReportsStore,
  StoreFigures,
  StoreLifecycle,
} from './areas.js';
export type { ClaimedWork, ClusterStore } from './cluster-store.js';
export type { FeedbackStore } from './feedback.js';
export type { JobsStore, RunsStore } from './jobs.js';
export type { OutboxStore } from './outbox.js';
export type {
  NewPullRequest,
  PullRequestFollowing,
  PullRequestPatch,
  PullRequestRecord,
  PullRequestState,
  PullRequestSummary,
  PullRequestsStore,
} from './pull-request-records.js';
export type {
  Change,
  JobIn,
  JobOrigin,
  JobPatch,
  JobRecord,
  NewFollowUp,
  NewJob,
  NewOutboxItem,
  NewRun,
  Orphans,
  OutboxItem,
  OutboxPatch,
  RunKind,
  RunOutcome,
  RunPatch,
  RunRecord,
  RunState,
  StoredPayload,
} from './records.js';
export type { Erased, RetentionStore } from './retention.js';
export type { UseQuota, UseReservation, UsesStore } from './uses.js';

import type { AssistantThreadsStore, HomeViewsStore, ReportsStore, StoreLifecycle } from './areas.js';
import type { ClusterStore } from './cluster-store.js';
import type { FeedbackStore } from './feedback.js';
import type { JobsStore, RunsStore } from './jobs.js';
import type { OutboxStore } from './outbox.js';
import type { PullRequestsStore } from './pull-request-records.js';
import type { RetentionStore } from './retention.js';
import type { RunLengthsStore } from './run-lengths.js';
import type { SlackPausesStore } from './slack-pauses.js';
import type { UsesStore } from './uses.js';

export type { RunLengthsStore } from './run-lengths.js';
export type { SlackPause, SlackPausesStore } from './slack-pauses.js';

/** The whole store, every role together: what each engine implements and the composition root opens. */
export interface Store
  extends ClusterStore,
    StoreLifecycle,
    JobsStore,
    RunsStore,
    OutboxStore,
    UsesStore,
    HomeViewsStore,
    AssistantThreadsStore,
    FeedbackStore,
    PullRequestsStore,
    SlackPausesStore,
    RunLengthsStore,
    ReportsStore,
    RetentionStore {}
