import type { AccessPolicy } from '../access/access-policy.js';
import type { AgentClient } from '../agent/client.js';
import type { RenderHints } from '../blocks/messages.js';
import type { Logger } from '../logging/logger.js';
import { type MetricsHooks, noMetrics } from '../metrics/hooks.js';
import type { SlackGateway } from '../slack/gateway.js';
import type { UserNames } from '../slack/user-names.js';
import type { Change, JobRecord, NewOutboxItem, Store } from '../store/types.js';
import type { PrivateTarget } from './outbox-items.js';

export interface JobServiceDeps {
  store: Store;
  /** This process's instance id: owner of the instructions it accepts until they are sent. */
  instanceId: string;
  /** The agent API client of a documentation project (null: the default project). */
  agentFor: (projectId: string | null) => AgentClient;
  /** The project a channel's jobs run on (`CHANNEL_PROJECTS`, else the default). */
  projectFor: (channelId: string) => string;
  /** Replies in one thread within this many milliseconds go to the agent as one follow-up. */
  batchMs: number;
  /** Most characters of thread context in a first prompt. */
  threadContextMaxChars: number;
  names: UserNames;
  hints: RenderHints;
  /** The bot's own user id, once known (auth.test). */
  botUserId: () => Promise<string | undefined>;
  slack: SlackGateway;
  access: AccessPolicy;
  logger: Logger;
  /** Longest instruction accepted, in characters of plain text. */
  maxPromptChars: number;
  /** First poll interval of a run, in milliseconds. */
  pollIntervalMs: number;
  /** Maximum age of a run before the poller stops watching it, in milliseconds. */
  maxAgeMs: number;
  /** Wakes the outbox after something was queued. */
  onEnqueued: () => void;
  /** Wakes the poller after a run started. */
  onRunStarted: () => void;
  /** First wait before an instruction held for verification is checked again, in milliseconds. */
  holdRetryMs?: number;
  /**
   * Runs background work (a batch whose window has passed) among the tracked tasks; false when
   * no slot is free (the batch then waits and tries again).
   */
  runTask: (name: string, work: () => Promise<void>) => boolean;
  /** Outcomes told outside the job's thread (`NOTIFY_*`). Default: the thread only. */
  notify?: NotifySettings;
  /** What becomes of instructions and runs, for the metrics endpoint. Default: not reported. */
  metrics?: Pick<MetricsHooks, 'instruction' | 'runFinished'>;
  now?: () => number;
}

/** Where a run's outcome is told besides its thread. */
export interface NotifySettings {
  /** The notification channel of a job's project (null: the default project), if it has one. */
  channelFor: (projectId: string | null) => string | undefined;
  /** `pr`: announce runs that opened a pull request; `all`: every outcome. */
  on: 'pr' | 'all';
  /** `dm`: also send the requester the outcome by direct message. */
  requester: 'thread' | 'dm';
  /** The workspace's address (auth.test `url`), for links to a job's thread; undefined while unknown. */
  workspaceUrl: () => Promise<string | undefined>;
}

/** What every flow of the job service works with: its dependencies, defaults filled in. */
export interface JobContext extends Omit<JobServiceDeps, 'metrics' | 'now'> {
  metrics: Pick<MetricsHooks, 'instruction' | 'runFinished'>;
  now: () => number;
  /**
   * Applies a change that queues outbox items (see {@link Store.apply}), then wakes the outbox.
   * False, and nothing woken, when the change's `expect` did not hold.
   */
  applyQueued(change: Change, at: number): Promise<boolean>;
  /** Queues outbox items (see {@link Store.enqueue}), then wakes the outbox. */
  enqueue(items: NewOutboxItem[], at: number): Promise<void>;
}

export function createJobContext(deps: JobServiceDeps): JobContext {
  const { store } = deps;
  return {
    ...deps,
    metrics: deps.metrics ?? noMetrics,
    now: deps.now ?? Date.now,
    // One place for "write, then wake": an item queued without a wake waits for the next one.
    async applyQueued(change, at) {
      const applied = await store.apply(change, at);
      if (applied) deps.onEnqueued();
      return applied;
    },
    async enqueue(items, at) {
      await store.enqueue(items, at);
      deps.onEnqueued();
    },
  };
}

/** Where the requester of a job is told something privately. */
export const requesterTarget = (job: JobRecord): PrivateTarget => ({
  channelId: job.channelId,
  userId: job.requesterId,
  // A job started inside a conversation answers there; a command's thread may not exist yet.
  threadTs: job.origin === 'command' ? null : job.threadTs,
  responseUrl: job.responseUrl,
});
