import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/types.js';
import { upgradedPostgresStore, upgradedSqliteStore } from '../helpers/old-store.js';
import { postgresAvailable } from '../helpers/postgres.js';

const server = await postgresAvailable();

/** The last version that recorded a session status Slack refused for good as the status itself. */
const BEFORE = 18;
const T0 = 1_700_000_000_000;

/** Two jobs as version 18 recorded them: one working (its status maybe refused), one waiting. */
const OLD_ROWS = `
  INSERT INTO jobs (id, team_id, channel_id, thread_ts, requester_id, instruction, trigger_key, phase,
    poll_interval_ms, created_at, updated_at, session_status)
  VALUES
    (1, 'T0TEAM', 'C0GENERAL', '1700000000.000100', 'U0ALICE', 'Words', 'k1', 'active', 10, ${T0}, ${T0}, 'processing'),
    (2, 'T0TEAM', 'C0GENERAL', '1700000000.000200', 'U0ALICE', 'Words', 'k2', 'idle', 10, ${T0}, ${T0}, 'active');
`;

async function expectProcessingAskedAgain(store: Store) {
  try {
    // Slack is asked again for the working job's status: the emoji follows what it answers.
    expect((await store.getJob(1))?.sessionStatus).toBeNull();
    expect((await store.getJob(2))?.sessionStatus).toBe('active');
    expect(await store.runLengths(null, 10)).toEqual([]);
  } finally {
    await store.close();
  }
}

describe('migration 19 on jobs recorded before it', () => {
  it('SQLite: a working job’s session status is forgotten, a waiting one’s kept', async () => {
    await expectProcessingAskedAgain(upgradedSqliteStore(BEFORE, OLD_ROWS));
  });

  it.runIf(server.ok)('PostgreSQL: the same', async () => {
    await expectProcessingAskedAgain(await upgradedPostgresStore(BEFORE, OLD_ROWS));
  });
});
