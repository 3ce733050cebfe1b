/**
 * A SQLite store on a real file, for the tests of what the file itself does: each test gets a
 * fresh folder with the store's path two folders down that do not exist yet, and every store
 * opened through `open` is closed and the folder removed after the test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';

export type SqliteStore = ReturnType<typeof openSqliteStore>;

/** Call inside a `describe`: `dir` and `path` are the current test's, set before it runs. */
export function storeFileEachTest() {
  const opened: SqliteStore[] = [];
  const file = {
    dir: '',
    path: '',
    open: (): SqliteStore => {
      const store = openSqliteStore(file.path);
      opened.push(store);
      return store;
    },
  };
  beforeEach(() => {
    file.dir = mkdtempSync(join(tmpdir(), 'docs-agent-store-'));
    file.path = join(file.dir, 'nested', 'deeper', 'store.sqlite');
  });
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    rmSync(file.dir, { recursive: true, force: true });
  });
  return file;
}
