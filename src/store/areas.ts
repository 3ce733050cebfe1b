import { clusterMethods } from './cluster-store.js';
import { feedbackMethods } from './feedback.js';
import { insertJob } from './inserts.js';
import { jobMethods } from './jobs.js';
import { outboxMethods } from './outbox.js';
import { pullRequestMethods } from './pull-requests.js';
import type { NewJob, NewRun } from './records.js';
import { eraseExpired } from './retention.js';
import { parseAssistantThread, parseFigures, parseProjectUses } from './rows.js';
import { runLengthMethods } from './run-lengths.js';
import { slackPauseMethods } from './slack-pauses.js';
import { type Engine, type Operation, type Statements, tx } from './statements.js';
import type { Store } from './types.js';
import { useMethods, usesPerProject } from './uses.js';

/** What the metrics endpoint reads from the store at each scrape (see {@link ReportsStore.figures}). */
export interface StoreFigures {
  /** Uses of the agent API counted since the given time, per project, as {@link UsesStore.instructionsSince}. */
  uses: { projectId: string | null; count: number }[];
  /** Jobs in phase `active`: the agent is working on their latest run. */
  activeJobs: number;
  /** Earliest next-poll time among active jobs, claimed or not (epoch ms); null when none is active. */
  earliestPollAt: number | null;
  /** Outbox items neither delivered nor given up. */
  outboxBacklog: number;
  /** When the oldest of those was queued (epoch ms); null when there is none. */
  oldestUndeliveredAt: number | null;
  /** Instances heard from within the instance time-out, as `ClusterStore.liveInstances`. */
  liveInstances: number;
}

/** How the store is shared, kept and closed, whatever it holds. */
export interface StoreLifecycle {
  /**
   * Whether several processes may use the store at once (a database server). When false (the
   * embedded SQLite file) any other instance on record is an earlier process that is gone.
   */
  readonly shared: boolean;
  /**
   * Does what {@link JobsStore.insertJob} does for `job` and rolls it back: nothing stays, and no one
   * sees it. Rehearsed before the app says it is ready (see `rehearsal.ts`).
   */
  rehearseInsert(job: NewJob, firstRun: NewRun, now: number): Promise<void>;
  /**
   * Copies SQLite's write-ahead log into the database file without waiting on readers; nothing
   * to do on PostgreSQL. SQLite does it on its own in the write that fills 1,000 pages, and that
   * write waits for the copy and a sync of the file: background work calls this when Slack is
   * quiet, so that the log seldom fills during a burst of commands.
   */
  checkpoint(): Promise<void>;
  close(): Promise<void>;
}

/** Who opened the App Home. */
export interface HomeViewsStore {
  /** Remembers that a person opened the App Home, so their jobs' changes refresh it. */
  recordHomeOpened(userId: string, teamId: string | null, now: number): Promise<void>;
  homeOpened(userId: string): Promise<boolean>;
}

/** Threads of Slack's assistant pane and the channel beside each. */
export interface AssistantThreadsStore {
  /**
   * Records an assistant thread (a direct message thread in Slack's assistant pane) and the
   * channel its pane is open beside (null: none). `at` is the Slack event's time (epoch ms): an
   * older event never overwrites a newer one.
   */
  recordAssistantThread(
    thread: { channelId: string; threadTs: string; contextChannelId: string | null },
    at: number,
  ): Promise<void>;
  /**
   * Marks an assistant thread used at `at` (epoch ms): its `updated_at` moves forward to `at`,
   * never back, and its channel is left as it is. The retention sweep forgets a thread neither
   * Slack nor its use has touched since its cutoff. Nothing happens to a thread not recorded.
   */
  touchAssistantThread(thread: { channelId: string; threadTs: string }, at: number): Promise<void>;
  /** The assistant thread, if Slack reported one with this channel and ts. */
  assistantThread(
    channelId: string,
    threadTs: string,
  ): Promise<{ contextChannelId: string | null } | undefined>;
}

/** What the metrics endpoint reads at each scrape. */
export interface ReportsStore {
  /**
   * The deployment-wide figures the metrics endpoint shows: agent API uses since `usesSince`,
   * active jobs and the most overdue poll, the outbox backlog and its oldest item, and instances
   * heard from lately. Read-only; served by the partial indexes on due jobs,
   * undelivered outbox items and reserved runs, so its cost follows the work in flight, not the
   * size of the history. Instances count as live when heard from within `instanceTimeoutMs`.
   */
  figures(usesSince: number, instanceTimeoutMs: number): Promise<StoreFigures>;
}

/*
 * The store written once for both engines: every area's methods put together, and here the
 * areas too small for a module of their own (the App Home's views, the assistant threads, the
 * metrics endpoint's figures, the insert's rehearsal), each with its statements, one text for
 * SQLite and PostgreSQL with `:name` parameters (see `queries.ts`).
 */

export const HOME_VIEW_QUERIES = {
  recordHomeOpened: `
    INSERT INTO home_views (user_id, team_id, opened_at) VALUES (:userId, :teamId, :now)
    ON CONFLICT (user_id) DO UPDATE SET opened_at = excluded.opened_at`,
  homeOpened: 'SELECT 1 AS seen FROM home_views WHERE user_id = :userId',
} as const;

export const ASSISTANT_THREAD_QUERIES = {
  recordAssistantThread: `
    INSERT INTO assistant_threads (channel_id, thread_ts, context_channel_id, updated_at)
    VALUES (:channelId, :threadTs, :contextChannelId, :at)
    ON CONFLICT (channel_id, thread_ts) DO UPDATE
      SET context_channel_id = excluded.context_channel_id, updated_at = excluded.updated_at
      WHERE excluded.updated_at >= assistant_threads.updated_at`,
  /** A message used the thread at `:at`: kept from the sweep as long as an event at that time would keep it. */
  touchAssistantThread: `
    UPDATE assistant_threads SET updated_at = :at
    WHERE channel_id = :channelId AND thread_ts = :threadTs AND updated_at < :at`,
  assistantThread: `
    SELECT context_channel_id FROM assistant_threads WHERE channel_id = :channelId AND thread_ts = :threadTs`,
} as const;

export const FIGURES_QUERIES = {
  /**
   * The metrics endpoint's figures in one statement (instances heard from within `:timeoutMs`);
   * the uses per project come from `instructionsSince`. Served by `jobs_due` and `outbox_due`,
   * whose rows are the work in flight.
   */
  figures: `
    SELECT
      (SELECT COUNT(*) FROM jobs WHERE phase = 'active') AS active_jobs,
      (SELECT MIN(next_poll_at) FROM jobs WHERE phase = 'active') AS earliest_poll_at,
      (SELECT COUNT(*) FROM outbox WHERE delivered_at IS NULL AND dead_at IS NULL) AS outbox_backlog,
      (SELECT MIN(created_at) FROM outbox WHERE delivered_at IS NULL AND dead_at IS NULL)
        AS oldest_undelivered_at,
      (SELECT COUNT(*) FROM instances WHERE heartbeat_at >= {{now}} - :timeoutMs) AS live_instances`,
} as const;

/**
 * The thread ts under which the context of a whole conversation is recorded: agent messaging's
 * Messages tab reports the channel it is beside per conversation (`app_context_changed`), not
 * per thread. No message has this ts.
 */
export const WHOLE_CONVERSATION = '';

type AssistantThreadMethods = Pick<
  Store,
  'recordAssistantThread' | 'touchAssistantThread' | 'assistantThread'
>;

/** The assistant-thread methods, written once for both engines over their {@link Statements}. */
export function assistantThreadMethods(run: Pick<Statements, 'one' | 'write'>): AssistantThreadMethods {
  return {
    async recordAssistantThread(thread, at) {
      await run.write('recordAssistantThread', { ...thread, at });
    },
    async touchAssistantThread(thread, at) {
      await run.write('touchAssistantThread', { ...thread, at });
    },
    assistantThread: async (channelId, threadTs) =>
      run.one('assistantThread', { channelId, threadTs }, parseAssistantThread),
  };
}

/** The metrics endpoint's figures, both reads in one transaction: they see the same moment. */
function* figures(since: number, timeoutMs: number): Operation<StoreFigures> {
  const counts = yield* tx.one('figures', { timeoutMs }, parseFigures);
  if (!counts) throw new Error('the figures query returned no row');
  return {
    ...counts,
    uses: usesPerProject(yield* tx.many('instructionsSince', { since }, parseProjectUses)),
  };
}

/**
 * Thrown inside a rehearsal's transaction so that the transaction rolls back. It never leaves
 * the store: {@link Store.rehearseInsert} swallows it and rethrows anything else.
 */
class RehearsalUndone extends Error {
  override name = 'RehearsalUndone';
  constructor() {
    super('insert rehearsed and rolled back');
  }
}

/**
 * Runs `work`, which ends its transaction by throwing {@link RehearsalUndone}: that one is
 * swallowed (the rollback was the point), anything else is thrown on.
 */
async function undone(work: () => unknown): Promise<void> {
  try {
    await work();
  } catch (error) {
    if (!(error instanceof RehearsalUndone)) throw error;
  }
}

/** A job's insert, ended by throwing, so that its transaction rolls back. */
function* rehearsed(job: NewJob, firstRun: NewRun, now: number): Operation<never> {
  yield* insertJob(job, firstRun, now);
  throw new RehearsalUndone();
}

/**
 * The store, written once for both engines over their {@link Engine}: every area's methods (and
 * here the App Home's two, the assistant threads', the figures and the rehearsal). Each engine
 * adds only its connection's own: checkpoints and closing, and what its transactions do
 * differently.
 */
export function storeAreas(engine: Engine): Omit<Store, 'checkpoint' | 'close'> {
  return {
    shared: engine.shared,
    ...clusterMethods(engine),
    ...jobMethods(engine),
    ...outboxMethods(engine),
    ...useMethods(engine),
    ...assistantThreadMethods(engine),
    ...feedbackMethods(engine),
    ...pullRequestMethods(engine),
    ...slackPauseMethods(engine),
    ...runLengthMethods(engine),
    async recordHomeOpened(userId, teamId, now) {
      await engine.write('recordHomeOpened', { userId, teamId, now });
    },
    homeOpened: async (userId) => (await engine.one('homeOpened', { userId }, (row) => row)) !== undefined,
    figures: (since, timeoutMs) => engine.transaction(figures(since, timeoutMs)),
    eraseExpired: (before, erasedInstruction, now, limit) =>
      engine.transaction(eraseExpired(before, erasedInstruction, now, limit)),
    rehearseInsert: (job, firstRun, now) => undone(() => engine.transaction(rehearsed(job, firstRun, now))),
  };
}
