import type { AccessPolicy } from '../access/access-policy.js';
import type { AgentClient } from '../agent/client.js';
import {
  GET_MAX_RETRY_AFTER_MS,
  getPolicy,
  longestAgentCallMs,
  POST_MAX_RETRY_AFTER_MS,
  postPolicy,
} from '../agent/errors.js';
import type { RenderHints } from '../blocks/messages.js';
import { type Leases, leaseFor } from '../cluster/membership.js';
import type { Config } from '../config/config.js';
import type { PrivateTarget } from '../delivery/kinds/private-note.js';
import type { Logger } from '../logging/logger.js';
import { SLACK_CALL_TIMEOUT_MS } from '../slack/client-options.js';
import type { ChannelAudiences, UserNames } from '../slack/directory.js';
import type { SlackGateway } from '../slack/gateway.js';
import type {
  AssistantThreadsStore,
  Change,
  ClusterStore,
  JobRecord,
  JobsStore,
  NewOutboxItem,
  OutboxStore,
  RunsStore,
} from '../store/types.js';
import type { Loop } from '../util/loop.js';
import { type MetricsHooks, noMetrics } from './metrics-hooks.js';

/** The settings the job flows read: slices of the configuration, never loose numbers. */
export type JobSettings = Pick<Config, 'maxPromptChars' | 'threadContextMaxChars'> & {
  poll: Pick<Config['poll'], 'intervalMs' | 'maxAgeMs'>;
  followUps: Pick<Config['followUps'], 'batchMs'>;
};

/** A background loop the job flows wake when they give it work (see {@link Loop.kick}). */
export type Wakeable = Pick<Loop, 'kick'>;

/** The store roles the job flows use: jobs and runs whole, and what they queue, claim and record. */
export type JobStore = JobsStore &
  RunsStore &
  ClusterStore &
  Pick<OutboxStore, 'enqueue'> &
  Pick<AssistantThreadsStore, 'assistantThread' | 'touchAssistantThread'>;

export interface JobServiceDeps {
  store: JobStore;
  /** This process's instance id: owner of the instructions it accepts until they are sent. */
  instanceId: string;
  settings: JobSettings;
  /**
   * The loops that carry the jobs' work on, created before the service: the outbox delivers
   * what the flows queue, the poller watches the runs they start.
   */
  loops: { outbox: Wakeable; poller: Wakeable };
  /** The agent API client of a documentation project (null: the default project). */
  agentFor: (projectId: string | null) => AgentClient;
  /** The project a channel's jobs run on (`CHANNEL_PROJECTS`, else the default). */
  projectFor: (channelId: string) => string;
  names: UserNames;
  hints: RenderHints;
  /** The bot's own user id, once known (auth.test). */
  botUserId: () => Promise<string | undefined>;
  slack: SlackGateway;
  /**
   * Who can read a channel a job is asked for in, when the request did not say. Asked in
   * background work only (a job's start, its outcome told elsewhere), after Slack's
   * acknowledgement: on the gateway with the yield gate, like the rest of that work.
   */
  audiences: ChannelAudiences;
  access: AccessPolicy;
  logger: Logger;
  /** First wait before an instruction waiting for verification is checked again, in milliseconds. */
  verificationRetryMs?: number | undefined;
  /**
   * How long an instance's claim on a job or follow-up lasts while it calls out for it (see
   * `cluster/membership.ts`): `agentWrite` over an agent API create or follow-up, `delivery` over the
   * post of a job's status card.
   */
  leases: Pick<Leases, 'agentWrite' | 'delivery'>;
  /** This process's monotonic clock (ms), which tells whether a claim still covers a call. */
  monotonic?: () => number;
  /**
   * Runs background work (a batch whose window has passed) among the tracked tasks; false when
   * no slot is free (the batch then waits and tries again).
   */
  runTask: (name: string, work: () => Promise<void>) => boolean;
  /** What becomes of instructions and runs, for the metrics endpoint. Default: not reported. */
  metrics?: Pick<MetricsHooks, 'instruction' | 'runFinished'>;
  now?: () => number;
}

/** What every flow of the job service works with: its dependencies, defaults filled in. */
export interface JobContext extends Omit<JobServiceDeps, 'metrics' | 'now' | 'monotonic'>, OutboxWrites {
  metrics: Pick<MetricsHooks, 'instruction' | 'runFinished'>;
  now: () => number;
  monotonic: () => number;
}

/** Store writes that queue outbox items, each followed by a wake of the outbox. */
export interface OutboxWrites {
  /**
   * Applies a change that queues outbox items (see {@link JobsStore.apply}), then wakes the outbox.
   * False, and nothing woken, when the change's `expect` did not hold.
   */
  applyQueued(change: Change, at: number): Promise<boolean>;
  /** Queues outbox items (see {@link OutboxStore.enqueue}), then wakes the outbox. */
  enqueue(items: NewOutboxItem[], at: number): Promise<void>;
}

/** One place for "write, then wake": an item queued without a wake waits for the next one. */
export function outboxWrites(
  store: Pick<JobsStore, 'apply'> & Pick<OutboxStore, 'enqueue'>,
  outbox: Wakeable,
): OutboxWrites {
  return {
    async applyQueued(change, at) {
      const applied = await store.apply(change, at);
      if (applied) outbox.kick();
      return applied;
    },
    async enqueue(items, at) {
      await store.enqueue(items, at);
      outbox.kick();
    },
  };
}

export function createJobContext(deps: JobServiceDeps): JobContext {
  return {
    ...deps,
    metrics: deps.metrics ?? noMetrics,
    now: deps.now ?? Date.now,
    monotonic: deps.monotonic ?? (() => performance.now()),
    ...outboxWrites(deps.store, deps.loops.outbox),
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

/**
 * Every lease, from the agent API time-out (`DOCS_AGENT_API_TIMEOUT_MS`) and the fixed Slack call
 * time-out and retry policies: a claim lasts as long as the work it guards, whatever that is.
 */
export function leasesFor(agentTimeoutMs: number): Leases {
  return {
    agentWrite: leaseFor(longestAgentCallMs(agentTimeoutMs, postPolicy, POST_MAX_RETRY_AFTER_MS)),
    agentRead: leaseFor(longestAgentCallMs(agentTimeoutMs, getPolicy, GET_MAX_RETRY_AFTER_MS)),
    delivery: leaseFor(SLACK_CALL_TIMEOUT_MS),
  };
}
