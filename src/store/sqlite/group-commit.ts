import type Database from 'better-sqlite3';
import type { Store } from '../types.js';

/** The inserts of one turn of the event loop, committed together. */
interface Group {
  waiters: Array<{ resolve: () => void; reject: (error: unknown) => void }>;
  /** Set once committed (or failed): a waiter that comes later settles at once. */
  outcome?: { error: unknown } | 'committed';
}

/**
 * `store` with the jobs its `insertJob` records in one turn of the event loop committed in one
 * transaction: the first insert opens it, the inserts that follow (the commands Slack sent
 * together) join it, and it commits once the turn's I/O callbacks are done (`setImmediate`).
 * Each insert resolves only after that commit, so a command is still durable before it is
 * acknowledged; a failed commit rejects every insert of the group. Every other method commits
 * the open group first, so background work's writes are durable the moment they return, as
 * without grouping. One commit per burst instead of one per command is most of an insert's cost.
 */
export function withGroupedInserts<S extends Store>(db: Database.Database, store: S): S {
  let open: Group | undefined;

  const commit = () => {
    const group = open;
    if (!group) return;
    open = undefined;
    try {
      db.exec('COMMIT');
      group.outcome = 'committed';
    } catch (error) {
      if (db.inTransaction) db.exec('ROLLBACK');
      group.outcome = { error };
    }
    for (const waiter of group.waiters.splice(0)) settle(group, waiter);
  };

  const settle = (group: Group, waiter: Group['waiters'][number]) => {
    if (group.outcome === 'committed') waiter.resolve();
    else if (group.outcome) waiter.reject(group.outcome.error);
  };

  const insertJob: Store['insertJob'] = async (job, firstRun, now) => {
    if (!open) {
      db.exec('BEGIN IMMEDIATE');
      open = { waiters: [] };
      setImmediate(commit);
    }
    const group = open;
    // Runs at once, in a savepoint of the group's transaction: a failed insert undoes only itself.
    const result = await store.insertJob(job, firstRun, now);
    await new Promise<void>((resolve, reject) => {
      const waiter = { resolve, reject };
      if (group.outcome) settle(group, waiter);
      else group.waiters.push(waiter);
    });
    return result;
  };

  /** Every other method, made to commit the open group first; built once each. */
  const committingFirst = new Map<PropertyKey, (...args: unknown[]) => unknown>();
  return new Proxy(store, {
    get(target, key, receiver) {
      if (key === 'insertJob') return insertJob;
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== 'function') return value;
      let wrapped = committingFirst.get(key);
      if (!wrapped) {
        wrapped = (...args: unknown[]) => {
          commit();
          return value.apply(target, args);
        };
        committingFirst.set(key, wrapped);
      }
      return wrapped;
    },
  });
}
