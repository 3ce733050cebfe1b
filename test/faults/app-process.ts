import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
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
  /** Freezes the app (SIGSTOP) until {@link AppProcess.thaw}: it neither heartbeats nor calls out. */
  freeze(): void;
  thaw(): void;
  exited: Promise<number | null>;
  output(): string;
}

/** libfaketime's offset for a clock `ms` ahead (negative: behind), in seconds. */
const faketimeOffset = (ms: number) => `${ms < 0 ? '-' : '+'}${Math.abs(ms) / 1000}s`;

/**
 * Starts the built app as the Procfile does. With `clockOffsetMs`, the app's clock really is
 * that far off: it runs under Debian's `faketime` (libfaketime), which moves the wall clock the
 * app reads (Date.now, new Date) and leaves its monotonic clock alone, as a host whose time
 * service failed would.
 */
export async function launch(
  env: Record<string, string>,
  options: { clockOffsetMs?: number } = {},
): Promise<AppProcess> {
  let output = '';
  const args = procfileArgs('web');
  const offset = options.clockOffsetMs;
  const child =
    offset === undefined
      ? spawn(process.execPath, args, { env: { PATH: process.env.PATH ?? '', ...env } })
      : spawn('faketime', ['-f', faketimeOffset(offset), process.execPath, ...args], {
          env: { PATH: process.env.PATH ?? '', ...env, FAKETIME_DONT_FAKE_MONOTONIC: '1' },
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
  // faketime runs the app as its child and exits with its status: signals go to the app itself.
  const appPid =
    offset === undefined
      ? child.pid
      : Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(' ')[0]);
  const signal = (name: NodeJS.Signals) => {
    if (child.exitCode !== null || appPid === undefined) return;
    try {
      process.kill(appPid, name);
    } catch {
      // Already gone.
    }
  };
  return {
    base: `http://127.0.0.1:${port}`,
    child,
    kill: () => signal('SIGKILL'),
    stop: async () => {
      signal('SIGTERM');
      return exited;
    },
    freeze: () => signal('SIGSTOP'),
    thaw: () => signal('SIGCONT'),
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
