import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

/**
 * Checkpoints SQLite's write-ahead log from a worker thread with a connection of its own: the
 * copy into the database file and its sync (hundreds of milliseconds after a burst of thousands
 * of commands) happen beside the event loop, never on it. Writers go on appending to the log
 * meanwhile; SQLite lets any connection checkpoint.
 */
export interface Checkpointer {
  /** Resolves when a passive checkpoint has run; rejects when the worker could not run one. */
  checkpoint(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The worker's code, evaluated (CommonJS) so that it runs the same from the build and from the
 * sources under test. It answers every message with one checkpoint.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
let db;
parentPort.on('message', () => {
  try {
    db ??= new Database(workerData.path, { fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ ok: true });
  } catch (error) {
    parentPort.postMessage({ ok: false, message: String(error && error.message) });
  }
});
`;

/** Thrown when the worker could not checkpoint (the caller checkpoints on its own connection). */
export class CheckpointFailed extends Error {
  override name = 'CheckpointFailed';
}

export function startCheckpointer(path: string): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { path, driver } });
  // The worker alone never keeps the process up.
  worker.unref();
  const pending: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  let failure: Error | undefined;
  const failAll = (error: Error) => {
    failure = error;
    for (const waiter of pending.splice(0)) waiter.reject(error);
  };
  worker.on('message', (reply: { ok: boolean; message?: string }) => {
    const waiter = pending.shift();
    if (reply.ok) waiter?.resolve();
    else waiter?.reject(new CheckpointFailed(`checkpoint failed: ${reply.message ?? 'unknown error'}`));
  });
  worker.on('error', (error) => failAll(new CheckpointFailed(`checkpoint worker failed: ${error.message}`)));
  worker.on('exit', () => failAll(failure ?? new CheckpointFailed('checkpoint worker stopped')));

  return {
    checkpoint() {
      if (failure) return Promise.reject(failure);
      return new Promise<void>((resolve, reject) => {
        pending.push({ resolve, reject });
        worker.postMessage('checkpoint');
      });
    },
    async close() {
      failure ??= new CheckpointFailed('checkpoint worker stopped');
      await worker.terminate();
    },
  };
}

/**
 * Checkpoints for the store's connection `db` to the file at `path`: SQLite no longer checkpoints
 * on a write; `checkpoint()` asks the worker, and checkpoints on `db` itself when the worker
 * cannot (the log must never grow without end).
 */
export function backgroundCheckpoints(db: Database.Database, path: string): Checkpointer {
  const worker = startCheckpointer(path);
  db.pragma('wal_autocheckpoint = 0');
  return {
    async checkpoint() {
      const failed = await worker.checkpoint().then(
        () => false,
        () => true,
      );
      if (failed) db.pragma('wal_checkpoint(PASSIVE)');
    },
    close: () => worker.close(),
  };
}
