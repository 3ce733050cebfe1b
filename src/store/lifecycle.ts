import type { Config } from '../config/config.js';
import { triggerKeys } from '../domain/keys.js';
import type { Logger } from '../logging/logger.js';
import { createLoop, type Loop } from '../util/loop.js';
import type { YieldGate } from '../util/yield-gate.js';
import { openPostgresStore } from './postgres/postgres-store.js';
import type { NewJob, NewRun } from './records.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './types.js';

/*
 * The store's life in the running app beyond what it holds: opened on the engine the
 * configuration names, its insert rehearsed before the app says it is ready, and SQLite's log
 * checkpointed in quiet moments.
 */

/** PostgreSQL when `DATABASE_URL` is set, the embedded SQLite file otherwise. Migrations applied. */
export async function openStore(
  config: Pick<Config, 'databasePath' | 'databaseUrl'>,
  logger?: Logger,
): Promise<Store> {
  return config.databaseUrl
    ? openPostgresStore(config.databaseUrl, {
        onIdleError: (error) =>
          logger?.warn('a database connection failed while idle; the pool replaces it', { error }),
      })
    : openSqliteStore(config.databasePath);
}

/** How often background work checkpoints SQLite's write-ahead log, in milliseconds. */
export const CHECKPOINT_INTERVAL_MS = 1_000;

/**
 * The background loop that checkpoints the store ({@link Store.checkpoint}) once a second, each
 * time after the gate: a burst of commands starts with an almost empty log, and its inserts
 * seldom have to copy it into the database file.
 */
export function createCheckpointLoop(options: {
  store: Pick<Store, 'checkpoint'>;
  logger: Logger;
  gate?: YieldGate;
  intervalMs?: number;
}): Loop {
  return createLoop({
    name: 'store checkpoint',
    logger: options.logger,
    idleMs: options.intervalMs ?? CHECKPOINT_INTERVAL_MS,
    ...(options.gate ? { gate: options.gate } : {}),
    async step() {
      await options.store.checkpoint();
      return { busy: false };
    },
  });
}

/** Inserts rehearsed before ready, at most: enough for V8 to compile the insert path fully. */
export const REHEARSALS = 200;
/** Longest the rehearsals may take, in milliseconds (a slow database server gets fewer). */
export const REHEARSAL_BUDGET_MS = 100;

/**
 * A command's job and first run as the ack path records them, under a key no command has. Every
 * field has the type a command's has (a response URL, a project), so the code compiled here fits
 * the real inserts: a null where they bring a string would have it thrown away and recompiled.
 */
function rehearsalJob(instanceId: string, i: number, pollIntervalMs: number): [NewJob, NewRun] {
  const instruction = 'Rehearsal of the insert path; rolled back';
  return [
    {
      teamId: 'T0REHEARSAL',
      channelId: 'C0REHEARSAL',
      requesterId: 'U0REHEARSAL',
      instruction,
      triggerKey: triggerKeys.rehearsal(instanceId, i),
      responseUrl: `https://hooks.slack.com/commands/T0REHEARSAL/${i}/rehearsal`,
      projectId: 'rehearsal',
      pollIntervalMs,
      owner: instanceId,
    },
    { kind: 'create', prompt: instruction, authorId: 'U0REHEARSAL', messageTs: null, owner: instanceId },
  ];
}

/**
 * Runs the insert of a command's job over and over, each time rolled back, until
 * {@link REHEARSALS} are done or {@link REHEARSAL_BUDGET_MS} has passed: the first commands
 * after start-up then find the statements prepared and the code compiled. Returns how many ran.
 * Never rejects: a failed rehearsal only leaves the first commands slower.
 */
export async function rehearseInserts(
  store: Pick<Store, 'rehearseInsert'>,
  options: {
    instanceId: string;
    pollIntervalMs: number;
    budgetMs?: number;
    now?: () => number;
    /** Told of the failure that ended the rehearsals early. */
    onError?: (error: unknown) => void;
  },
): Promise<number> {
  const now = options.now ?? Date.now;
  const deadline = performance.now() + (options.budgetMs ?? REHEARSAL_BUDGET_MS);
  let done = 0;
  try {
    while (done < REHEARSALS && performance.now() < deadline) {
      const [job, run] = rehearsalJob(options.instanceId, done, options.pollIntervalMs);
      await store.rehearseInsert(job, run, now());
      done += 1;
    }
  } catch (error) {
    // Reported, not thrown: the first real command meets the store as it is and explains.
    options.onError?.(error);
  }
  return done;
}
