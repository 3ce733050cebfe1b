import { existsSync, statSync } from 'node:fs';
import { inspect } from 'node:util';
import type pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';
import {
  CHECKPOINT_INTERVAL_MS,
  createCheckpointLoop,
  openStore,
  REHEARSALS,
  rehearseInserts,
} from '../../src/store/lifecycle.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { NewJob, Store } from '../../src/store/types.js';
import type { Loop } from '../../src/util/loop.js';
import { tempDatabase } from '../helpers/harness.js';
import {
  dropFreshSchema,
  freshSchemaUrl,
  postgresAvailable,
  shownUrl,
  TEST_DATABASE_URL,
} from '../helpers/postgres.js';
import { createRun, newJob, T0 } from './store-contract.js';

const server = await postgresAvailable();
const PASSWORD = 'not-a-real-secret';

/** `TEST_DATABASE_URL` with a password, and the rest of the URL changed by `change`. */
function withPassword(change: (url: URL) => void = () => undefined): string {
  const url = new URL(TEST_DATABASE_URL);
  url.password = PASSWORD;
  change(url);
  return url.toString();
}

/** Everything an operator could see of a failure: its message, stack, causes and fields. */
const shown = (error: unknown) => `${inspect(error, { depth: 8 })} ${(error as Error).stack ?? ''}`;

describe('opening the store named by the configuration', () => {
  let store: Store | undefined;
  let schemaUrl: string | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
    if (schemaUrl) await dropFreshSchema(schemaUrl);
    schemaUrl = undefined;
  });

  it('opens the SQLite file at the path when no DATABASE_URL is set', async () => {
    const path = tempDatabase();
    store = await openStore({ databasePath: path, databaseUrl: undefined });
    expect(store.shared).toBe(false);
    expect((await store.insertJob(newJob('local'), createRun(), T0)).created).toBe(true);
    expect(existsSync(path)).toBe(true);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it.runIf(server.ok)(
    'opens PostgreSQL, migrated, when DATABASE_URL is set, and leaves the SQLite path alone',
    async () => {
      schemaUrl = await freshSchemaUrl();
      const path = tempDatabase();
      const lines: string[] = [];
      const logger = createLogger({ level: 'warn', secrets: [], write: (line) => lines.push(line) });
      store = await openStore({ databasePath: path, databaseUrl: schemaUrl }, logger);
      expect(store.shared).toBe(true);
      expect((await store.insertJob(newJob('shared'), createRun(), T0)).created).toBe(true);
      expect(existsSync(path)).toBe(false);
      // A connection failing while idle is logged, and the store goes on.
      (store as Store & { pool: pg.Pool }).pool.emit('error', new Error('terminating connection'));
      expect(lines.join('\n')).toMatch(/a database connection failed while idle.*terminating connection/s);
      expect(await store.getJob(1)).toMatchObject({ triggerKey: 'shared' });
    },
  );

  it.runIf(server.ok)('never shows the DATABASE_URL’s password when it cannot open the store', async () => {
    const failing: [string, RegExp][] = [
      // Nothing listens there.
      [
        withPassword((url) => {
          url.port = '1';
        }),
        /ECONNREFUSED/,
      ],
      [
        withPassword((url) => {
          url.pathname = '/no_such_database';
        }),
        /database "no_such_database" does not exist/,
      ],
      [withPassword((url) => url.searchParams.set('sslmode', 'verify_full')), /sslmode "verify_full"/],
      [
        withPassword((url) => {
          url.searchParams.set('sslmode', 'verify-ca');
          url.searchParams.set('sslrootcert', '/no/such/ca.pem');
        }),
        /cannot read \/no\/such\/ca\.pem/,
      ],
      [`postgres://docs:${PASSWORD}@[not-a-host/docs`, /not a valid URL/],
    ];
    for (const [databaseUrl, why] of failing) {
      const error = await openStore({ databasePath: tempDatabase(), databaseUrl }).then(
        (opened) => {
          store = opened;
          throw new Error(`${databaseUrl} was expected to fail`);
        },
        (e: unknown) => e,
      );
      expect((error as Error).message).toMatch(why);
      expect(shown(error)).not.toContain(PASSWORD);
    }
  });
});

if (!server.ok)
  console.warn(`PostgreSQL tests of opening the store NOT RUN: no server at ${shownUrl()} (${server.why})`);

describe('the store checkpoint loop', () => {
  let loop: Loop | undefined;
  const lines: string[] = [];
  const logger = createLogger({ level: 'error', secrets: [], write: (line) => lines.push(line) });
  afterEach(async () => {
    await loop?.stop();
    loop = undefined;
    lines.length = 0;
    vi.useRealTimers();
  });

  it('checkpoints at once, then once a second', async () => {
    vi.useFakeTimers();
    const checkpoint = vi.fn(async () => undefined);
    loop = createCheckpointLoop({ store: { checkpoint }, logger });
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(checkpoint).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(CHECKPOINT_INTERVAL_MS - 1);
    expect(checkpoint).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(checkpoint).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(3 * CHECKPOINT_INTERVAL_MS);
    expect(checkpoint).toHaveBeenCalledTimes(5);
    expect(CHECKPOINT_INTERVAL_MS).toBe(1_000);
  });

  it('waits for the gate before each checkpoint', async () => {
    vi.useFakeTimers();
    let open!: () => void;
    const gate = {
      clear: vi.fn(() => new Promise<void>((resolve) => (open = resolve))),
      requestStarted: () => undefined,
      requestEnded: () => undefined,
      inFlight: 0,
    };
    const checkpoint = vi.fn(async () => undefined);
    loop = createCheckpointLoop({ store: { checkpoint }, logger, gate, intervalMs: 10 });
    loop.start();
    await vi.advanceTimersByTimeAsync(50);
    expect(gate.clear).toHaveBeenCalledTimes(1);
    expect(checkpoint).not.toHaveBeenCalled();
    open();
    await vi.advanceTimersByTimeAsync(0);
    expect(checkpoint).toHaveBeenCalledTimes(1);
  });

  it('logs a failed checkpoint and goes on checkpointing', async () => {
    vi.useFakeTimers();
    const checkpoint = vi
      .fn<() => Promise<void>>()
      .mockRejectedValueOnce(new Error('database is locked'))
      .mockResolvedValue(undefined);
    loop = createCheckpointLoop({ store: { checkpoint }, logger, intervalMs: 10 });
    loop.start();
    await vi.advanceTimersByTimeAsync(10);
    expect(checkpoint).toHaveBeenCalledTimes(2);
    expect(lines.join('\n')).toMatch(/store checkpoint step failed.*database is locked/s);
  });
});

describe('rehearsed inserts', () => {
  it('runs the insert of a command up to its limit and keeps none of them', async () => {
    const store = openSqliteStore(':memory:');
    const seen: NewJob[] = [];
    const done = await rehearseInserts(
      {
        rehearseInsert: (job, run, now) => {
          seen.push(job);
          return store.rehearseInsert(job, run, now);
        },
      },
      // A budget no machine runs out of: the limit is what is tested.
      { instanceId: 'i-test', pollIntervalMs: 5_000, budgetMs: 60_000 },
    );
    expect(done).toBe(REHEARSALS);
    expect(new Set(seen.map((job) => job.triggerKey)).size).toBe(REHEARSALS);
    expect(await store.recentJobs({ channelId: seen[0]?.channelId ?? '' }, 10)).toEqual([]);
    await store.close();
  });

  it('stops when its time is up', async () => {
    const done = await rehearseInserts(
      { rehearseInsert: () => new Promise((resolve) => setTimeout(resolve, 20)) },
      { instanceId: 'i-test', pollIntervalMs: 5_000, budgetMs: 50 },
    );
    expect(done).toBeGreaterThanOrEqual(1);
    expect(done).toBeLessThanOrEqual(3);
  });

  it('stops at the first failure, reports it and does not reject', async () => {
    let calls = 0;
    const reported: unknown[] = [];
    const done = await rehearseInserts(
      {
        rehearseInsert: async () => {
          calls += 1;
          if (calls === 3) throw new Error('disk I/O error');
        },
      },
      { instanceId: 'i-test', pollIntervalMs: 5_000, budgetMs: 60_000, onError: (e) => reported.push(e) },
    );
    expect(done).toBe(2);
    expect(calls).toBe(3);
    expect(reported).toEqual([new Error('disk I/O error')]);
  });
});
