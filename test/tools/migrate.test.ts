import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { procfileArgs } from '../helpers/procfile.js';

/*
 * The Procfile's `release:` step, run as the platform runs it: it migrates the store and exits,
 * or fails the deploy with a reason that names no secret.
 */
const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function release(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    // Only what the step reads: nothing from the developer's own environment or .env decides it.
    const cwd = mkdtempSync(join(tmpdir(), 'docs-agent-release-'));
    folders.push(cwd);
    execFile(
      process.execPath,
      procfileArgs('release'),
      { cwd, env: { PATH: process.env.PATH ?? '', ...env }, timeout: 15_000 },
      (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('release step (tools/migrate)', () => {
  it('migrates the SQLite file it is given and says where', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'docs-agent-migrate-'));
    folders.push(folder);
    const path = join(folder, 'store.sqlite');
    const run = await release({ DATABASE_PATH: path });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`migrations applied (SQLite at ${path})\n`);
    const db = new Database(path, { readonly: true });
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as {
      name: string;
    }[];
    db.close();
    expect(tables.map((t) => t.name)).toEqual(expect.arrayContaining(['jobs', 'runs', 'outbox']));
  });

  it('fails the deploy when the database cannot be reached, without its password', async () => {
    const run = await release({ DATABASE_URL: 'postgres://docs:not-a-real-password@127.0.0.1:9/docs' });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^migrations failed: /);
    expect(run.stderr).not.toContain('not-a-real-password');
  });

  it('is the step the Procfile names', () => {
    expect(procfileArgs('release')).toContain(resolve('dist/tools/migrate.js'));
  });
});
