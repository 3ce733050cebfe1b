/**
 * Does the warm start earn its lines? The cold burst (`bench/cold-burst.ts`) against two builds
 * of docs-agent in one run: this checkout's (`with`) and another checkout's build (`without`,
 * `BENCH_AGAINST=<its directory>`, built with `npm run build` there), beside bare Bolt warmed as
 * docs-agent warms itself (`bareWarm`) and bare Bolt not warmed (`bareCold`). Each round starts
 * all four afresh, in the order of a balanced Latin square (each in each place equally often,
 * each after each other equally often), so that the machine's other work falls on all alike.
 * Writes every reading to `BENCH_OUT` (default reports/warm-start.json).
 *
 *   npm run build && BENCH_AGAINST=/tmp/without npx vitest run --config vitest.bench.config.ts warm-start
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { it } from 'vitest';
import { WARM_UP_LANES, WARM_UP_REQUESTS } from '../src/warm-start.js';
import { waitFor } from '../test/helpers/http.js';
import { type Child, startBareBolt, startDocsAgent, type ThreadCpu } from './processes.js';
import { runInfo } from './report.js';
import { median, round, type Summary, summarize } from './stats.js';
import { taggedWorld } from './tagged-world.js';

const setting = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const VARIANTS = ['bareWarm', 'with', 'without', 'bareCold'] as const;
type Variant = (typeof VARIANTS)[number];
/** A balanced Latin square of the four variants: one row per round, in turn. */
const ORDERS: Variant[][] = [
  ['bareWarm', 'with', 'bareCold', 'without'],
  ['with', 'without', 'bareWarm', 'bareCold'],
  ['without', 'bareCold', 'with', 'bareWarm'],
  ['bareCold', 'bareWarm', 'without', 'with'],
];

interface Burst {
  variant: Variant;
  round: number;
  /** Its place in the round's order, 0 to 3. */
  place: number;
  /** Each command's ack latency, in order sent, milliseconds. */
  ackMs: number[];
  non200: number;
  cpu: ThreadCpu;
  /** docs-agent only: each command's acknowledgement to its card, and to its job. */
  toCardMs?: number[];
  toJobMs?: number[];
  /** docs-agent only: what its ready line says the warm start did. */
  warmUp?: unknown;
}

/** docs-agent as the Procfile in `dir` starts it, from `dir`. */
function startDocsAgentIn(dir: string, env: Record<string, string>) {
  const back = process.cwd();
  process.chdir(dir);
  try {
    return startDocsAgent(env);
  } finally {
    process.chdir(back);
  }
}

const readyLine = (child: Child) => {
  const line = child
    .output()
    .split('\n')
    .find((l) => l.includes('"msg":"docs-agent is ready"'));
  return line === undefined ? undefined : ((JSON.parse(line) as { warmUp?: unknown }).warmUp ?? null);
};

it('measures the cold burst with and without the warm start', async () => {
  const against = process.env.BENCH_AGAINST;
  if (!against) throw new Error('BENCH_AGAINST: the directory of a build without the warm start');
  const settings = {
    against: resolve(against),
    againstCommit: execFileSync('git', ['-C', against, 'rev-parse', '--short', 'HEAD'], {
      encoding: 'utf8',
    }).trim(),
    commands: setting('BENCH_COLD_COMMANDS', 100),
    concurrency: setting('BENCH_CONCURRENCY', 50),
    rounds: setting('BENCH_COLD_ROUNDS', 16),
    latencyMs: setting('BENCH_LATENCY_MS', 0),
  };
  const run = runInfo(
    `npm run build && BENCH_AGAINST=<a build without the warm start> BENCH_COLD_ROUNDS=${settings.rounds} npx vitest run --config vitest.bench.config.ts warm-start`,
  );
  const world = await taggedWorld({ latencyMs: settings.latencyMs });
  const bursts: Burst[] = [];
  const burstOf = async (variant: Variant, roundNo: number, place: number) => {
    const docs = variant === 'with' || variant === 'without';
    const child = docs
      ? await (variant === 'with'
          ? startDocsAgent(world.env())
          : startDocsAgentIn(settings.against, world.env()))
      : await startBareBolt(world.botEnv());
    const label = `${variant}${roundNo}`;
    try {
      if (variant === 'bareWarm')
        await world.load(child.base, `warm${label}`, WARM_UP_REQUESTS, WARM_UP_LANES);
      const before = child.threadCpuMs();
      const load = await world.load(child.base, label, settings.commands, settings.concurrency);
      const after = child.threadCpuMs();
      const burst: Burst = {
        variant,
        round: roundNo,
        place,
        ackMs: load.results.map((r) => round(r.doneAt - r.sentAt, 3)),
        non200: load.results.filter((r) => r.status !== 200).length,
        cpu: { main: round(after.main - before.main, 1), others: round(after.others - before.others, 1) },
      };
      if (docs) {
        const tags = load.results.map((r) => `${label}-${r.i}`);
        await waitFor(
          'every card and job of the burst',
          () => tags.every((t) => world.createAt.has(t) && world.rootAt.has(t)),
          30_000,
        ).catch(() => undefined);
        burst.toCardMs = [];
        burst.toJobMs = [];
        for (const r of load.results) {
          const card = world.rootAt.get(`${label}-${r.i}`);
          const job = world.createAt.get(`${label}-${r.i}`);
          if (card === undefined || job === undefined) continue;
          burst.toCardMs.push(round(card - r.doneAt, 1));
          burst.toJobMs.push(round(job - r.doneAt - 2 * settings.latencyMs, 1));
        }
        burst.warmUp = readyLine(child);
      }
      bursts.push(burst);
    } finally {
      await child.stop();
    }
  };
  try {
    for (let roundNo = 0; roundNo < settings.rounds; roundNo++) {
      const order = ORDERS[roundNo % ORDERS.length] as Variant[];
      for (const [place, variant] of order.entries()) await burstOf(variant, roundNo, place);
      process.stdout.write(`warm-start: round ${roundNo + 1} of ${settings.rounds} done\n`);
    }
  } finally {
    await world.close();
  }
  const figures = figuresOf(bursts);
  const out = resolve(process.env.BENCH_OUT ?? 'reports/warm-start.json');
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify({ run, settings, figures, bursts }, null, 1)}\n`);
  process.stdout.write(`${JSON.stringify(figures, null, 1)}\nWritten to ${out}\n`);
});

const spread = (values: number[]) => ({
  median: round(median(values)),
  min: round(Math.min(...values)),
  max: round(Math.max(...values)),
});

/** Pooled figures per variant, and round by round ratios between them. */
function figuresOf(bursts: Burst[]) {
  const of = (v: Variant) => bursts.filter((b) => b.variant === v).sort((a, b) => a.round - b.round);
  const pooled = (v: Variant, pick: (b: Burst) => number[] | undefined): Summary =>
    summarize(of(v).flatMap((b) => pick(b) ?? []));
  const perRound = (v: Variant, f: (b: Burst) => number) => of(v).map(f);
  const p = (b: Burst, q: 'p50' | 'p99', pick: (b: Burst) => number[] | undefined = (x) => x.ackMs) =>
    summarize(pick(b) ?? [])[q];
  /** Round by round ratio of a figure of `a` to the same figure of `b`. */
  const paired = (a: Variant, b: Variant, f: (x: Burst) => number) => {
    const bs = of(b);
    return of(a).map((x, i) => round(f(x) / f(bs[i] as Burst)));
  };
  const variants = Object.fromEntries(
    VARIANTS.map((v) => [
      v,
      {
        ackMs: pooled(v, (b) => b.ackMs),
        non200: of(v).reduce((n, b) => n + b.non200, 0),
        roundAckP50Ms: perRound(v, (b) => p(b, 'p50')),
        roundAckP99Ms: perRound(v, (b) => p(b, 'p99')),
        cpuMainMs: spread(perRound(v, (b) => b.cpu.main)),
        cpuOthersMs: spread(perRound(v, (b) => b.cpu.others)),
        ...(v === 'with' || v === 'without'
          ? {
              toCardMs: pooled(v, (b) => b.toCardMs),
              toJobMs: pooled(v, (b) => b.toJobMs),
              roundToCardP99Ms: perRound(v, (b) => p(b, 'p99', (x) => x.toCardMs)),
              roundToJobP99Ms: perRound(v, (b) => p(b, 'p99', (x) => x.toJobMs)),
            }
          : {}),
      },
    ]),
  ) as unknown as Record<Variant, { ackMs: Summary }>;
  const pooledRatio = (a: Variant, b: Variant) => ({
    p50: round(variants[a].ackMs.p50 / variants[b].ackMs.p50),
    p99: round(variants[a].ackMs.p99 / variants[b].ackMs.p99),
  });
  const ackP50 = (b: Burst) => p(b, 'p50');
  const ackP99 = (b: Burst) => p(b, 'p99');
  return {
    variants,
    pooledAckRatios: {
      withToBareWarm: pooledRatio('with', 'bareWarm'),
      withoutToBareWarm: pooledRatio('without', 'bareWarm'),
      withoutToBareCold: pooledRatio('without', 'bareCold'),
      withoutToWith: pooledRatio('without', 'with'),
      bareColdToBareWarm: pooledRatio('bareCold', 'bareWarm'),
    },
    roundRatios: {
      withToBareWarmP99: spread(paired('with', 'bareWarm', ackP99)),
      withoutToBareWarmP99: spread(paired('without', 'bareWarm', ackP99)),
      withoutToBareColdP99: spread(paired('without', 'bareCold', ackP99)),
      withoutToWithP50: spread(paired('without', 'with', ackP50)),
      withoutToWithP99: spread(paired('without', 'with', ackP99)),
      withoutToWithCardP99: spread(paired('without', 'with', (b) => p(b, 'p99', (x) => x.toCardMs))),
      withoutToWithJobP99: spread(paired('without', 'with', (b) => p(b, 'p99', (x) => x.toJobMs))),
      withoutToWithCpuMain: spread(paired('without', 'with', (b) => b.cpu.main)),
      withoutToWithCpuOthers: spread(paired('without', 'with', (b) => b.cpu.others)),
    },
  };
}
