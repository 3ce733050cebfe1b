import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/types.js';
import { upgradedPostgresStore, upgradedSqliteStore } from '../helpers/old-store.js';
import { postgresAvailable } from '../helpers/postgres.js';

const server = await postgresAvailable();

/** The last version before runs had keys of their own. */
const BEFORE = 13;
const T0 = 1_700_000_000_000;
const REPLY_TS = '1700000000.000200';

/** A job as a release before version 14 recorded it: a command's first run and a reply. */
const OLD_ROWS = `
  INSERT INTO jobs (id, team_id, channel_id, thread_ts, requester_id, instruction, trigger_key, phase,
    poll_interval_ms, created_at, updated_at)
  VALUES (1, 'T0TEAM', 'C0GENERAL', '1700000000.000100', 'U0ALICE', 'Words', 'k1', 'active', 10, ${T0}, ${T0});
  INSERT INTO runs (job_id, seq, kind, prompt, author_id, message_ts, state, created_at)
  VALUES
    (1, 1, 'create', 'Words', 'U0ALICE', NULL, 'sent', ${T0}),
    (1, 2, 'follow_up', 'Also the CLI', 'U0BOB', '${REPLY_TS}', 'pending', ${T0});
`;

const reply = (messageTs: string, prompt = 'Delivered again') =>
  ({ kind: 'follow_up', prompt, authorId: 'U0BOB', messageTs }) as const;

async function expectKeyedAsBefore(store: Store) {
  try {
    // The rows stay as they were written; their keys are read from what they hold.
    const [first, replied] = await store.getRuns(1);
    expect(first).toMatchObject({ seq: 1, runKey: 'first', messageTs: null });
    expect(replied).toMatchObject({ seq: 2, runKey: REPLY_TS, messageTs: REPLY_TS });
    // The same reply delivered again after the upgrade is still a repeat.
    expect(await store.insertFollowUp(1, reply(REPLY_TS), T0 + 1)).toEqual({ run: replied, created: false });
    const next = await store.insertFollowUp(1, reply('1700000000.000300', 'Next'), T0 + 2);
    expect(next.run).toMatchObject({ seq: 3, runKey: '1700000000.000300' });
    const modal = { ...reply('', 'From a modal'), messageTs: null, runKey: 'modal:V0FIX' };
    expect((await store.insertFollowUp(1, modal, T0 + 3)).run).toMatchObject({ seq: 4, messageTs: null });
    expect((await store.insertFollowUp(1, modal, T0 + 4)).created).toBe(false);
  } finally {
    await store.close();
  }
}

describe('migration 14 on runs recorded before it', () => {
  it('SQLite: a reply recorded before keeps its message as its key, and is found by it', async () => {
    const store = upgradedSqliteStore(BEFORE, OLD_ROWS);
    // Not rewritten: the old rows hold no key.
    expect(store.db.prepare('SELECT COUNT(*) AS n FROM runs WHERE run_key IS NULL').get()).toEqual({ n: 2 });
    await expectKeyedAsBefore(store);
  });

  it.runIf(server.ok)('PostgreSQL: the same', async () => {
    await expectKeyedAsBefore(await upgradedPostgresStore(BEFORE, OLD_ROWS));
  });
});
