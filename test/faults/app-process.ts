import { type ChildProcess, spawn } from 'node:child_process';
import Database from 'better-sqlite3';
import { waitFor } from '../helpers/http.js';
import { procfileArgs } from '../helpers/procfile.js';
import { postSigned } from '../helpers/signing.js';

/** The built app as a child process, started the way the Procfile starts it. */
export interface AppProcess {
  base: string;
  child: ChildProcess;
  /** SIGKILL, at once: no shutdown code runs. */
  kill(): void;
  /** SIGTERM and wait for the exit code. */
  stop(): Promise<number | null>;
  exited: Promise<number | null>;
  output(): string;
}

export async function launch(env: Record<string, string>): Promise<AppProcess> {
  let output = '';
  const child = spawn(process.execPath, procfileArgs('web'), {
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  child.stdout?.on('data', (d) => (output += d));
  child.stderr?.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const port = await waitFor(
    'app ready',
    () => {
      if (child.exitCode !== null) throw new Error(`app exited early:\n${output}`);
      return Number(output.match(/"msg":"docs-agent is ready"[^\n]*"port":(\d+)/)?.[1]);
    },
    15_000,
  );
  return {
    base: `http://127.0.0.1:${port}`,
    child,
    kill: () => {
      if (child.exitCode === null) child.kill('SIGKILL');
    },
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
    exited,
    output: () => output,
  };
}

/** Whether the process has not exited (nor been killed). */
export const isRunning = (app: AppProcess | undefined): app is AppProcess =>
  app !== undefined && app.child.exitCode === null && app.child.signalCode === null;

/**
 * Sends a correctly signed request as Slack would; true when the app acknowledged it (2xx).
 * False when the app is not running or the connection failed, as Slack would see it.
 */
export async function sendTo(
  app: AppProcess | undefined,
  body: string,
  contentType: string,
  headers: Record<string, string> = {},
): Promise<boolean> {
  if (!isRunning(app)) return false;
  try {
    const res = await postSigned(app.base, body, { contentType, headers });
    await res.text();
    return res.ok;
  } catch {
    return false;
  }
}

/**
 * Whether the store shows nothing left to do: no job starting or running, no instruction
 * waiting, no message undelivered. Read through a second, read-only connection.
 */
export function settled(databasePath: string): boolean {
  const db = new Database(databasePath, { readonly: true, fileMustExist: true });
  try {
    const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
    return (
      count("SELECT COUNT(*) AS n FROM jobs WHERE phase IN ('accepted', 'posting', 'creating', 'active')") ===
        0 &&
      count("SELECT COUNT(*) AS n FROM runs WHERE state IN ('pending', 'ready', 'sending')") === 0 &&
      count('SELECT COUNT(*) AS n FROM outbox WHERE delivered_at IS NULL AND dead_at IS NULL') === 0
    );
  } finally {
    db.close();
  }
}
