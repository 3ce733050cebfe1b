import { execFile, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { waitFor } from '../test/helpers/http.js';
import { procfileArgs } from '../test/helpers/procfile.js';

const run = promisify(execFile);

/** A child process of the benchmark, with what it printed. */
export interface Child {
  pid: number;
  base: string;
  output(): string;
  stop(): Promise<void>;
  /** Peak resident set size so far, in bytes (Linux `VmHWM`); NaN when it could not be read. */
  peakRss(): number;
  /** CPU time the process has used so far, user and system, in milliseconds (`/proc/<pid>/stat`). */
  cpuMs(): number;
  /**
   * CPU time so far of the main thread (JavaScript, and so every acknowledgement) and of all the
   * process's other threads (V8's compiler and garbage collector helpers), in milliseconds, to
   * the nanosecond (`/proc/<pid>/task/<tid>/schedstat`).
   */
  threadCpuMs(): ThreadCpu;
}

/** CPU milliseconds of a process's main thread and of its other threads. */
export interface ThreadCpu {
  main: number;
  others: number;
}

/** Clock ticks per second of `/proc/<pid>/stat` (`getconf CLK_TCK`: 100 on Linux). */
const CLOCK_TICKS = 100;

function start(args: string[], env: Record<string, string>, portPattern: RegExp): Promise<Child> {
  let output = '';
  const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH ?? '', ...env } });
  child.stdout?.on('data', (d) => (output += d));
  child.stderr?.on('data', (d) => (output += d));
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  return waitFor(
    `${args.at(-1)} listening`,
    () => {
      if (child.exitCode !== null) throw new Error(`${args.at(-1)} exited early:\n${output}`);
      return Number(output.match(portPattern)?.[1]);
    },
    20_000,
  ).then((port) => ({
    pid: child.pid as number,
    base: `http://127.0.0.1:${port}`,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
    peakRss: () => {
      try {
        const kb = readFileSync(`/proc/${child.pid}/status`, 'utf8').match(/VmHWM:\s+(\d+) kB/)?.[1];
        // Not measured: never a zero that would pass a "below" target.
        return kb === undefined ? Number.NaN : Number(kb) * 1024;
      } catch {
        return Number.NaN;
      }
    },
    threadCpuMs: () => {
      const pid = child.pid as number;
      const ns = (tid: string) => {
        try {
          return Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
        } catch {
          return 0; // a helper thread that ended between listing and reading
        }
      };
      const times = readdirSync(`/proc/${pid}/task`).map((tid) => ({
        main: Number(tid) === pid,
        ms: ns(tid) / 1e6,
      }));
      const sum = (main: boolean) => times.filter((t) => t.main === main).reduce((a, t) => a + t.ms, 0);
      return { main: sum(true), others: sum(false) };
    },
    cpuMs: () => {
      // Fields after the command name (which may hold spaces): utime and stime are 14th and 15th.
      const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return ((Number(fields[11]) + Number(fields[12])) * 1_000) / CLOCK_TICKS;
    },
  }));
}

/** docs-agent as the Procfile starts it. */
export const startDocsAgent = (env: Record<string, string>) =>
  // BENCH_PROFILE_DIR: write a CPU profile of docs-agent there, to see where its time goes.
  start(
    [
      ...(process.env.BENCH_PROFILE_DIR
        ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`]
        : []),
      // BENCH_NODE_FLAGS: extra Node flags for docs-agent (memory experiments).
      ...(process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? []),
      ...procfileArgs('web'),
    ],
    env,
    /"msg":"docs-agent is ready"[^\n]*"port":(\d+)/,
  );

/** The Node flags of the Procfile's `web:` line (heap caps), which every baseline runs with too. */
export const nodeFlags = () => procfileArgs('web').filter((a) => a.startsWith('-'));

/** The baseline: Bolt as its README has a user write it, with a handler that only acknowledges. */
export const startBareBolt = (env: Record<string, string>) =>
  start([...nodeFlags(), resolve('bench/bare-bolt.mjs')], env, /"port":(\d+)/);

/** The tuned baseline: Bolt set up as docs-agent sets it up (receiver, no conversation store). */
export const startTunedBolt = (env: Record<string, string>) =>
  start([...nodeFlags(), resolve('bench/tuned-bolt.mjs')], env, /"port":(\d+)/);

/** The baseline of CPU per job: a naive bot that starts jobs and polls them (`bench/naive-bot.mjs`). */
export const startNaiveBot = (env: Record<string, string>) =>
  start([...nodeFlags(), resolve('bench/naive-bot.mjs')], env, /"port":(\d+)/);

export interface LoadInput {
  url: string;
  secret: string;
  count: number;
  concurrency: number;
  users: number;
  channels: number;
  label: string;
  responseBase: string;
  first?: number;
  /** Commands per second, sent on a fixed schedule (an open loop); without it, a closed loop. */
  rate?: number;
}

export interface LoadResult {
  startedAt: number;
  finishedAt: number;
  results: { i: number; sentAt: number; doneAt: number; status: number; error?: string }[];
}

/** Runs the load generator as its own process and returns what it measured. */
export async function runLoad(input: LoadInput): Promise<LoadResult> {
  const { stdout } = await run(
    process.execPath,
    [resolve('bench/load-generator.mjs'), JSON.stringify(input)],
    {
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  return JSON.parse(stdout) as LoadResult;
}
