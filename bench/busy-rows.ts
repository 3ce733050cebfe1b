import type { BusyRun } from './busy-readings.js';
import type { BusyPair, BusyWorkspaceResult } from './busy-workspace.js';
import type { Summary } from './stats.js';
import { judge, measured, ms, NOT_MEASURED, type Row, s, x } from './verdicts.js';

const none: Summary = { count: 0, p50: Number.NaN, p95: Number.NaN, p99: Number.NaN, max: Number.NaN };

/** A run that did not happen: every reading missing, so every target on it "not measured". */
const notRun = (instances: number, limited: boolean): BusyRun => ({
  instances,
  limited,
  commands: Number.NaN,
  non200: Number.NaN,
  followUps: Number.NaN,
  runs: Number.NaN,
  finished: Number.NaN,
  refused: {},
  duringRetryAfter: {},
  callsPerRun: {},
  commandToCardMs: none,
  endToOutcomeMs: none,
  endToCardMs: none,
  endToEmojiMs: none,
  endToSessionMs: none,
  mismatched: Number.NaN,
  mismatchedBy: {},
  offRootEmoji: {},
  lost: { commandsWithoutJob: Number.NaN, followUpsNotRun: Number.NaN, jobsWithoutOutcome: Number.NaN },
  doubled: Number.NaN,
  waitedMs: Number.NaN,
  allFinal: false,
});

/** `method n, method n…`, largest first; "none" for no calls; not measured without counts. */
function perMethod(run: BusyRun, counts: Record<string, number>): string {
  if (!measured(run.runs)) return NOT_MEASURED;
  const entries = Object.entries(counts).sort(([, a], [, b]) => b - a);
  return entries.length === 0 ? 'none' : entries.map(([method, n]) => `${method} ${n}`).join(', ');
}

const total = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);
const p50p95 = (l: Summary, unit: (n: number) => string) => `${unit(l.p50)} / ${unit(l.p95)}`;
const lost = (r: BusyRun) =>
  measured(r.commands)
    ? `${r.lost.commandsWithoutJob} / ${r.lost.followUpsNotRun} / ${r.lost.jobsWithoutOutcome} (of ${r.commands} commands, ${r.followUps} follow-ups, ${r.finished} finished)`
    : NOT_MEASURED;
const mismatched = (r: BusyRun) => {
  if (!measured(r.mismatched)) return NOT_MEASURED;
  const why = Object.entries(r.mismatchedBy).map(([what, n]) => `${what} ${n}`);
  const roots = Object.entries(r.offRootEmoji ?? {}).map(([shown, n]) => `${shown} ${n}`);
  if (roots.length) why.push(`roots showing ${roots.join(', ')}`);
  return `${r.mismatched} of ${r.finished}${why.length ? ` (${why.join('; ')})` : ''}`;
};

/** A row of a pair's, named after where it was measured. */
type RowOf = (measure: string, fields: Omit<Row, 'measure'>) => Row;

/** A pair's figures with no target: what the calls were, and what the threads showed. */
function reportedRows(row: RowOf, limited: BusyRun, free: BusyRun): Row[] {
  const reported = { ratio: '', target: 'reported', met: undefined };
  const cosmetic = (r: BusyRun) =>
    [r.endToCardMs, r.endToEmojiMs, r.endToSessionMs].map((l) => p50p95(l, s)).join('; ');
  return [
    row('429s by method', { ours: perMethod(limited, limited.refused), baseline: '', ...reported }),
    row('Slack calls per run by method', {
      ours: perMethod(limited, limited.callsPerRun),
      baseline: `${perMethod(free, free.callsPerRun)} (no limits)`,
      ...reported,
    }),
    row('finished jobs whose thread is not in its final state (what is off)', {
      ours: mismatched(limited),
      baseline: `${mismatched(free)} (no limits)`,
      ...reported,
    }),
    row(
      "agent's end to the card's last update / the root emoji's last change / the session's last status, p50 / p95",
      {
        ours: cosmetic(limited),
        baseline: `${cosmetic(free)} (no limits)`,
        ...reported,
      },
    ),
    row('runs with more than one outcome post', {
      ours: measured(limited.doubled) ? String(limited.doubled) : NOT_MEASURED,
      baseline: measured(free.doubled) ? `${free.doubled} (no limits)` : NOT_MEASURED,
      ...reported,
    }),
  ];
}

/** The rows of one pair: the limited run against its unlimited baseline. */
function pairRows(where: string, pair: BusyPair | undefined, instances: number): Row[] {
  const limited = pair?.limited ?? notRun(instances, true);
  const free = pair?.unlimited ?? notRun(instances, false);
  const outcomeRatio = limited.endToOutcomeMs.p95 / free.endToOutcomeMs.p95;
  const cardRatio = limited.commandToCardMs.p95 / free.commandToCardMs.p95;
  const lostCount = total(limited.lost);
  const postRefused = limited.refused['chat.postMessage'] ?? 0;
  const during = total(limited.duringRetryAfter);
  const counted = measured(limited.runs) && Object.keys(limited.callsPerRun).length > 0;
  const row: RowOf = (measure, fields) => ({
    measure: `${where}: ${measure}`,
    ...fields,
  });
  return [
    row(
      'lost: commands without a job / follow-ups the agent never got / finished jobs without an outcome post',
      {
        ours: lost(limited),
        baseline: lost(free),
        ratio: '',
        target: '0',
        serves: 'everyone: nothing a person asked for is lost',
        met: judge([lostCount, limited.commands || Number.NaN], () => lostCount === 0),
      },
    ),
    row("agent's end to outcome post p50 / p95", {
      ours: p50p95(limited.endToOutcomeMs, s),
      baseline: `${p50p95(free.endToOutcomeMs, s)} (no limits)`,
      ratio: `p95 ${x(outcomeRatio)}`,
      target: 'p95 ≤ 1.2x',
      serves: 'the person who asked, waiting for the outcome',
      met: judge([outcomeRatio], () => outcomeRatio <= 1.2),
    }),
    row('command to status card p50 / p95', {
      ours: p50p95(limited.commandToCardMs, ms),
      baseline: `${p50p95(free.commandToCardMs, ms)} (no limits)`,
      ratio: `p95 ${x(cardRatio)}`,
      target: 'p95 ≤ 1.2x',
      serves: 'the person typing: the first thing they see',
      met: judge([cardRatio], () => cardRatio <= 1.2),
    }),
    row('429s on chat.postMessage (what a person waits for)', {
      ours: counted ? String(postRefused) : NOT_MEASURED,
      baseline: '',
      ratio: '',
      target: '0',
      serves: 'people waiting for a card or an outcome',
      met: judge([counted ? postRefused : Number.NaN], () => postRefused === 0),
    }),
    row('calls made during a Retry-After, by method', {
      ours: counted ? `${during}: ${perMethod(limited, limited.duringRetryAfter)}` : NOT_MEASURED,
      baseline: '',
      ratio: '',
      target: '0',
      serves: 'the workspace: Slack treats an app that calls through its 429s as misbehaving',
      met: judge([counted ? during : Number.NaN], () => during === 0),
    }),
    ...reportedRows(row, limited, free),
  ];
}

/** The busy workspace's rows: one instance on SQLite, then two sharing PostgreSQL. */
export function busyRows(busy: BusyWorkspaceResult, settings: Record<string, number | string>): Row[] {
  const load = `busy workspace (${settings.busyRate} commands/min for ${settings.busyMinutes} min, Slack's rate limits)`;
  return [
    ...pairRows(`${load}, 1 instance`, busy.one, 1),
    ...pairRows(`${load}, 2 instances on PostgreSQL`, busy.two, 2),
  ];
}
