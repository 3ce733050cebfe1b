import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/types.js';
import { upgradedPostgresStore, upgradedSqliteStore } from '../helpers/old-store.js';
import { postgresAvailable } from '../helpers/postgres.js';

const server = await postgresAvailable();

/** The last version before jobs recorded their privacy. */
const BEFORE = 8;
const T0 = 1_700_000_000_000;

/** Jobs as a release before version 9 recorded them, and the pane thread one of them was in. */
const OLD_ROWS = `
  INSERT INTO jobs (id, team_id, channel_id, thread_ts, requester_id, instruction, trigger_key, phase,
    poll_interval_ms, created_at, updated_at)
  VALUES
    (1, 'T0TEAM', 'C0GENERAL', '1700000000.000100', 'U0ALICE', 'Channel words', 'k1', 'idle', 10, ${T0}, ${T0}),
    (2, 'T0TEAM', 'D0ALICE', '1700000000.000200', 'U0ALICE', 'Direct words', 'k2', 'idle', 10, ${T0}, ${T0}),
    (3, 'T0TEAM', 'D0ALICE', '1700000000.000300', 'U0ALICE', 'Pane words', 'k3', 'idle', 10, ${T0}, ${T0}),
    (4, 'T0TEAM', 'G0GROUP', '1700000000.000400', 'U0ALICE', 'Group words', 'k4', 'idle', 10, ${T0}, ${T0});
  INSERT INTO assistant_threads (channel_id, thread_ts, context_channel_id, updated_at)
    VALUES ('D0ALICE', '1700000000.000300', 'C0API', ${T0});
`;

async function expectMigrated(store: Store) {
  // A channel cannot say now whether it was public then: treated as private.
  expect(await store.getJob(1)).toMatchObject({ privacy: 'unknown', contextChannelId: null });
  expect(await store.getJob(2)).toMatchObject({ privacy: 'direct', contextChannelId: null });
  expect(await store.getJob(3)).toMatchObject({ privacy: 'pane', contextChannelId: 'C0API' });
  expect(await store.getJob(4)).toMatchObject({ privacy: 'unknown', contextChannelId: null });
  await store.close();
}

describe('migration 9 on jobs recorded before it', () => {
  it('SQLite: direct messages and pane threads from their ids, every other job unknown', async () => {
    await expectMigrated(upgradedSqliteStore(BEFORE, OLD_ROWS));
  });

  it.runIf(server.ok)('PostgreSQL: the same', async () => {
    await expectMigrated(await upgradedPostgresStore(BEFORE, OLD_ROWS));
  });
});
