import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { assistantThreadMethods, WHOLE_CONVERSATION } from '../../src/store/assistant-threads.js';
import type { Params } from '../../src/store/queries/named.js';
import { type QueryName, queriesFor } from '../../src/store/queries.js';
import type { Row } from '../../src/store/rows.js';
import { migrate } from '../../src/store/sqlite/database-file.js';

const T0 = 1_700_000_000_000;
const DM = 'D0ALICE';
const THREAD = '1700000000.000100';

describe('assistant threads, on the shared statements', () => {
  let db: Database.Database;
  /** Every statement run, in order; `delay` makes writes finish later, as a database server's do. */
  let ran: { name: QueryName; params: Params }[];
  let delay: boolean;
  let methods: ReturnType<typeof assistantThreadMethods>;

  beforeEach(() => {
    db = new Database(':memory:');
    migrate(db);
    ran = [];
    delay = false;
    const sql = queriesFor('sqlite');
    methods = assistantThreadMethods({
      one: (name, params, parse) => {
        ran.push({ name, params });
        const row = db.prepare(sql[name]).get(params) as Record<string, unknown> | undefined;
        return row === undefined ? undefined : parse(row as Row);
      },
      write: (name, params) => {
        ran.push({ name, params });
        const changes = () => db.prepare(sql[name]).run(params).changes;
        return delay ? new Promise((resolve) => setImmediate(() => resolve(changes()))) : changes();
      },
    });
  });
  afterEach(() => {
    db.close();
  });

  it('keeps the channel of the latest event, not of one re-delivered late', async () => {
    const thread = { channelId: DM, threadTs: THREAD };
    expect(await methods.assistantThread(DM, THREAD)).toBeUndefined();
    await methods.recordAssistantThread({ ...thread, contextChannelId: 'C0FIRST' }, T0);
    await methods.recordAssistantThread({ ...thread, contextChannelId: 'C0SECOND' }, T0 + 20);
    await methods.recordAssistantThread({ ...thread, contextChannelId: 'C0LATE' }, T0 + 10);
    expect(await methods.assistantThread(DM, THREAD)).toEqual({ contextChannelId: 'C0SECOND' });
    // An event at the same time as the last one is the newer word on it.
    await methods.recordAssistantThread({ ...thread, contextChannelId: null }, T0 + 20);
    expect(await methods.assistantThread(DM, THREAD)).toEqual({ contextChannelId: null });
  });

  it('records what the whole conversation is beside apart from each of its threads', async () => {
    await methods.recordAssistantThread(
      { channelId: DM, threadTs: WHOLE_CONVERSATION, contextChannelId: 'C0PANE' },
      T0,
    );
    await methods.recordAssistantThread(
      { channelId: DM, threadTs: THREAD, contextChannelId: 'C0THREAD' },
      T0,
    );
    expect(await methods.assistantThread(DM, WHOLE_CONVERSATION)).toEqual({ contextChannelId: 'C0PANE' });
    expect(await methods.assistantThread(DM, THREAD)).toEqual({ contextChannelId: 'C0THREAD' });
    expect(await methods.assistantThread('D0BOB', WHOLE_CONVERSATION)).toBeUndefined();
  });

  it('a message in the thread moves its time forward only, and never records an unknown thread', async () => {
    const thread = { channelId: DM, threadTs: THREAD };
    await methods.touchAssistantThread(thread, T0);
    expect(await methods.assistantThread(DM, THREAD)).toBeUndefined();
    await methods.recordAssistantThread({ ...thread, contextChannelId: 'C0FIRST' }, T0 + 10);
    await methods.touchAssistantThread(thread, T0 + 30);
    await methods.touchAssistantThread(thread, T0 + 5);
    const at = () => db.prepare('SELECT updated_at AS at FROM assistant_threads').get() as { at: number };
    expect(at().at).toBe(T0 + 30);
    // An event older than the last message no longer changes the channel.
    await methods.recordAssistantThread({ ...thread, contextChannelId: 'C0STALE' }, T0 + 20);
    expect(await methods.assistantThread(DM, THREAD)).toEqual({ contextChannelId: 'C0FIRST' });
  });

  it('resolves a record only once the engine’s write has finished', async () => {
    delay = true;
    await methods.recordAssistantThread({ channelId: DM, threadTs: THREAD, contextChannelId: 'C0DOCS' }, T0);
    expect(db.prepare('SELECT COUNT(*) AS n FROM assistant_threads').get()).toEqual({ n: 1 });
    await methods.touchAssistantThread({ channelId: DM, threadTs: THREAD }, T0 + 1);
    expect(ran.map((r) => [r.name, r.params])).toEqual([
      ['recordAssistantThread', { channelId: DM, threadTs: THREAD, contextChannelId: 'C0DOCS', at: T0 }],
      ['touchAssistantThread', { channelId: DM, threadTs: THREAD, at: T0 + 1 }],
    ]);
  });
});
