import { AT_REST, sqlList } from '../domain/phases.js';
import type { Logger } from '../logging/logger.js';
import { createLoop, type Loop } from '../util/loop.js';
import { parseId } from './rows.js';
import { type Operation, tx } from './statements.js';
import type { Store } from './types.js';

/** What one {@link RetentionStore.eraseExpired} call did. */
export interface Erased {
  /** Jobs whose instruction, prompts and response_url were erased. */
  jobs: number;
  /** Delivered (or abandoned) outbox items deleted. */
  outboxItems: number;
  /** App Home visits forgotten. */
  homeViews: number;
  /** Assistant threads (and the channel their pane was beside) forgotten. */
  assistantThreads: number;
}

/** Forgetting what is kept no longer than needed. */
export interface RetentionStore {
  /**
   * Retention: for jobs finished (idle, not started, start unknown or gone; no run open, nothing
   * left to deliver) and unchanged since before `before`, replaces the instruction with
   * `erasedInstruction`, empties every run's prompt (which carries thread context and follow-up
   * texts) and forgets the response_url. The job row, its thread and its ids stay, so a reply in
   * an old thread still finds its job. Also deletes outbox items delivered or abandoned before
   * `before`, and App Home visits and assistant threads last heard of before then. Handles at most `limit` jobs and `limit`
   * outbox items per call; call again while it reports that many.
   */
  eraseExpired(before: number, erasedInstruction: string, now: number, limit: number): Promise<Erased>;
}

export const DAY_MS = 86_400_000;
/** How often the retention sweep looks for expired data, in milliseconds (hourly). */
export const RETENTION_SWEEP_MS = 3_600_000;
/** Jobs (and outbox items) erased per store transaction, so a sweep never holds the store long. */
export const RETENTION_BATCH = 200;

/** What an erased instruction reads as wherever a job is shown. */
export const erasedInstruction = (days: number) => `(erased after ${days} days)`;

export interface RetentionOptions {
  store: Store;
  logger: Logger;
  /** Days a finished job's texts are kept (`RETENTION_DAYS`); 0 keeps them forever. */
  retentionDays: number;
  /** Time between sweeps, in milliseconds; default {@link RETENTION_SWEEP_MS}. */
  intervalMs?: number;
  now?: () => number;
}

export interface RetentionSweep extends Loop {
  /** One round: erases up to {@link RETENTION_BATCH} expired jobs and outbox items now. */
  sweep(): Promise<Erased>;
}

/**
 * The retention sweep: a background loop that, every {@link RETENTION_SWEEP_MS}, erases what
 * people wrote in jobs finished more than `retentionDays` ago (instruction, prompts with their
 * thread context, follow-up texts, response_url), deletes outbox items delivered before then, and
 * forgets App Home visits and assistant threads last heard of before then (see
 * {@link Store.eraseExpired}). The job rows stay, so replies in old threads still route.
 * Several instances may sweep at once: erasing twice changes nothing.
 */
export function createRetentionSweep(options: RetentionOptions): RetentionSweep {
  const { store, logger, retentionDays } = options;
  const now = options.now ?? Date.now;
  const none: Erased = { jobs: 0, outboxItems: 0, homeViews: 0, assistantThreads: 0 };

  async function sweep(): Promise<Erased> {
    if (retentionDays === 0) return none;
    const at = now();
    const erased = await store.eraseExpired(
      at - retentionDays * DAY_MS,
      erasedInstruction(retentionDays),
      at,
      RETENTION_BATCH,
    );
    if (Object.values(erased).some((n) => n > 0)) {
      logger.info('retention: erased data older than the retention period', { ...erased, retentionDays });
    }
    return erased;
  }

  const loop = createLoop({
    name: 'retention sweep',
    logger,
    idleMs: options.intervalMs ?? RETENTION_SWEEP_MS,
    async step() {
      const erased = await sweep();
      // A full batch means more may be waiting: go on at once.
      return { busy: erased.jobs >= RETENTION_BATCH || erased.outboxItems >= RETENTION_BATCH };
    },
  });
  return {
    ...loop,
    // Keeping data forever needs no loop at all.
    start: () => (retentionDays === 0 ? undefined : loop.start()),
    sweep,
  };
}

/** The phases a job may be erased in, written once with the job's phases. */
const ERASABLE = sqlList(AT_REST);

/** The sweep's statements, one text for SQLite and PostgreSQL with `:name` parameters (see `queries.ts`). */
export const RETENTION_QUERIES = {
  /**
   * Finished jobs unchanged since before `:before` that still hold text (never erased, or a later
   * reply's prompt), with no run open and nothing left to deliver. Served by `jobs_finished`.
   */
  expiredJobs: `
    SELECT j.id AS id FROM jobs j
    WHERE j.phase IN (${ERASABLE}) AND j.updated_at < :before
      AND (j.erased_at IS NULL OR EXISTS (SELECT 1 FROM runs r WHERE r.job_id = j.id AND r.prompt <> '')
        OR EXISTS (SELECT 1 FROM feedback_votes v
          WHERE v.job_id = j.id AND v.reason <> '' AND v.updated_at < :before))
      AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.job_id = j.id AND r.state IN ('pending', 'ready', 'sending'))
      AND NOT EXISTS (
        SELECT 1 FROM outbox o WHERE o.job_id = j.id AND o.delivered_at IS NULL AND o.dead_at IS NULL)
    ORDER BY j.updated_at LIMIT :limit`,
  /** Re-checked here, so a job that moved on since it was chosen keeps its texts. */
  eraseJob: `
    UPDATE jobs SET instruction = :erasedInstruction, response_url = NULL, erased_at = :now
    WHERE id = :jobId AND updated_at < :before AND phase IN (${ERASABLE})`,
  /** A reply recorded after the job was chosen keeps its text. */
  eraseRuns: `
    UPDATE runs SET prompt = ''
    WHERE job_id = :jobId AND prompt <> '' AND created_at < :before AND state NOT IN ('pending', 'ready', 'sending')`,
  /**
   * Outbox items delivered or abandoned before `:before`, at most `:limit`. The newest item
   * always stays: on SQLite a deleted highest id would be handed out again, and ids name messages
   * in Slack.
   */
  deleteDoneOutbox: `
    DELETE FROM outbox WHERE id IN (
      SELECT id FROM outbox
      WHERE (delivered_at < :before OR dead_at < :before) AND id < (SELECT MAX(id) FROM outbox)
      LIMIT :limit)`,
  deleteOldHomeViews: 'DELETE FROM home_views WHERE opened_at < :before',
  /** Assistant threads Slack last told about before `:before`: a pane idle that long is forgotten. */
  deleteOldAssistantThreads: 'DELETE FROM assistant_threads WHERE updated_at < :before',
} as const;

/** One round of {@link Store.eraseExpired}, in one transaction; `instruction` replaces each erased one. */
export function* eraseExpired(
  before: number,
  instruction: string,
  now: number,
  limit: number,
): Operation<Erased> {
  const expired = yield* tx.many('expiredJobs', { before, limit }, parseId);
  for (const { id: jobId } of expired) {
    yield* tx.write('eraseJob', { jobId, before, erasedInstruction: instruction, now });
    yield* tx.write('eraseRuns', { jobId, before });
    yield* tx.write('eraseFeedbackReasons', { jobId, before });
  }
  return {
    jobs: expired.length,
    outboxItems: yield* tx.write('deleteDoneOutbox', { before, limit }),
    homeViews: yield* tx.write('deleteOldHomeViews', { before }),
    assistantThreads: yield* tx.write('deleteOldAssistantThreads', { before }),
  };
}
