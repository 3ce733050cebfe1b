import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  AT_REST,
  canMove,
  enterPhase,
  expectPhase,
  FIRST_PHASE,
  IllegalPhaseChangeError,
  JOB_PHASES,
  type JobPhase,
  mayRetry,
  moveJob,
  NO_WAY_ON,
  POLLED,
  RETRYABLE,
  STILL_STARTING,
  sqlList,
  TAKES_FOLLOW_UPS,
  THREAD_RELEASING_PHASES,
  TRANSITIONS,
  UnexpectedPhaseError,
} from '../../src/domain/phases.js';
import { migrationsFor } from '../../src/store/schema.js';

const exits = (phase: JobPhase): readonly JobPhase[] => TRANSITIONS[phase];

function reachableFrom(start: JobPhase): Set<JobPhase> {
  const seen = new Set<JobPhase>([start]);
  const queue = [start];
  for (let phase = queue.shift(); phase; phase = queue.shift())
    for (const next of exits(phase))
      if (!seen.has(next)) {
        seen.add(next);
        queue.push(next);
      }
  return seen;
}

describe('the transition table', () => {
  it('lists every phase, and only phases', () => {
    expect(Object.keys(TRANSITIONS).sort()).toEqual([...JOB_PHASES].sort());
    for (const phase of JOB_PHASES) for (const next of exits(phase)) expect(JOB_PHASES).toContain(next);
  });

  it('reaches every phase from the one a job is recorded in', () => {
    expect(FIRST_PHASE).toBe('accepted');
    expect([...reachableFrom(FIRST_PHASE)].sort()).toEqual([...JOB_PHASES].sort());
  });

  it('gives the phases at rest their documented exits: a follow-up, or "Try again" after a failure', () => {
    const atRestExits = Object.fromEntries([...AT_REST].map((phase) => [phase, [...exits(phase)].sort()]));
    expect(atRestExits).toEqual({
      idle: ['active', 'gone', 'retried'],
      not_started: ['retried'],
      start_unknown: ['retried'],
      gone: [],
      retried: [],
    });
  });

  it('never lets a job go back to being started once it left that', () => {
    for (const phase of JOB_PHASES)
      if (!STILL_STARTING.has(phase))
        for (const next of exits(phase)) expect(STILL_STARTING.has(next), `${phase} → ${next}`).toBe(false);
  });

  it('ends every path in a phase with no exit or one that takes follow-ups', () => {
    for (const phase of JOB_PHASES) {
      const ends = [...reachableFrom(phase)].filter((p) => NO_WAY_ON.has(p) || TAKES_FOLLOW_UPS.has(p));
      expect(ends.length, phase).toBeGreaterThan(0);
    }
  });
});

describe('the named phase sets', () => {
  it('split the phases into starting, taking follow-ups and no way on', () => {
    const all = [...STILL_STARTING, ...TAKES_FOLLOW_UPS, ...NO_WAY_ON];
    expect(all.sort()).toEqual([...JOB_PHASES].sort());
  });

  it('are consistent with the table', () => {
    // No way on: exactly the phases with no exit but being tried again as a new job.
    const onward = (p: JobPhase) => exits(p).filter((next) => next !== 'retried');
    expect(JOB_PHASES.filter((p) => onward(p).length === 0).sort()).toEqual([...NO_WAY_ON].sort());
    // Tried again: only from the phases that may be, and that gives the thread up.
    expect(JOB_PHASES.filter((p) => canMove(p, 'retried')).sort()).toEqual([...RETRYABLE].sort());
    expect(THREAD_RELEASING_PHASES.has('retried')).toBe(true);
    // At rest: nothing running or being started, so those with no way on and idle.
    expect([...AT_REST].sort()).toEqual([...NO_WAY_ON, 'idle'].sort());
    // A job that gives up its thread has no way on.
    for (const phase of THREAD_RELEASING_PHASES) expect(NO_WAY_ON.has(phase)).toBe(true);
    // The polled phase takes follow-ups, and the poller can end its run.
    for (const phase of POLLED) {
      expect(TAKES_FOLLOW_UPS.has(phase)).toBe(true);
      expect(canMove(phase, 'idle')).toBe(true);
      expect(canMove(phase, 'gone')).toBe(true);
    }
    // Taking follow-ups: a follow-up (re)starts the run.
    for (const phase of TAKES_FOLLOW_UPS) expect(canMove(phase, 'active')).toBe(true);
    // Still starting: each may be refused, and only the last one reaches the agent.
    for (const phase of STILL_STARTING) expect(canMove(phase, 'not_started')).toBe(true);
    expect(JOB_PHASES.filter((p) => STILL_STARTING.has(p) && canMove(p, 'active'))).toEqual(['creating']);
  });

  it('are written into SQL as their members', () => {
    expect(sqlList(STILL_STARTING)).toBe("'accepted', 'posting', 'creating'");
    expect(sqlList(THREAD_RELEASING_PHASES)).toBe("'not_started', 'gone', 'retried'");
  });

  it('leave the shipped migrations as they were (a changed set needs a new migration)', () => {
    const sql = migrationsFor('sqlite').map((m) => m.sql);
    expect(sql[0]).toContain(
      "CREATE INDEX jobs_interrupted ON jobs (phase) WHERE phase IN ('accepted', 'posting', 'creating');",
    );
    expect(sql[4]).toContain("WHERE phase IN ('idle', 'not_started', 'start_unknown', 'gone');");
    expect(sql[6]).toContain("WHERE phase IN ('idle', 'not_started', 'start_unknown', 'gone', 'retried');");
  });
});

describe('"Try again"', () => {
  const job = (phase: JobPhase, lastOutcome: string | null = null, erasedAt: number | null = null) => ({
    phase,
    lastOutcome,
    erasedAt,
  });

  it('is offered after a failed run, a failed create call, or an unknown start', () => {
    expect(mayRetry(job('idle', 'failed'))).toBe(true);
    expect(mayRetry(job('not_started'))).toBe(true);
    expect(mayRetry(job('start_unknown'))).toBe(true);
  });

  it('is not offered on a job that runs, succeeded, was forgotten, tried again, or erased', () => {
    for (const outcome of [
      'completed_pr',
      'completed_no_changes',
      'archived',
      'gone',
      'stopped_watching',
      null,
    ])
      expect(mayRetry(job('idle', outcome)), String(outcome)).toBe(false);
    for (const phase of ['accepted', 'posting', 'creating', 'active', 'gone', 'retried'] as const)
      expect(mayRetry(job(phase, 'failed')), phase).toBe(false);
    expect(mayRetry(job('idle', 'failed', 1))).toBe(false);
  });
});

describe('a phase change', () => {
  it('is the patch of an allowed move', () => {
    expect(enterPhase('accepted', 'posting')).toEqual({ phase: 'posting' });
    expect(enterPhase('active', 'active')).toEqual({ phase: 'active' });
  });

  it('throws a typed error for a move the table does not allow', () => {
    // A phase read from the store is not held to the table by the compiler.
    const from = 'gone' as JobPhase as 'idle';
    expect(() => enterPhase(from, 'active')).toThrow(IllegalPhaseChangeError);
    // @ts-expect-error the compiler refuses a move the table does not allow
    expect(() => enterPhase('idle', 'accepted')).toThrow(/cannot move from idle to accepted/);
  });

  it('is checked before the store is written', async () => {
    const calls: unknown[][] = [];
    const store = {
      transitionJob: async (...args: unknown[]) => {
        calls.push(args);
        return true;
      },
    };
    expect(await moveJob(store, 7, 'accepted', 'posting', 1)).toBe(true);
    const from = 'idle' as 'idle' | 'active';
    expect(() => moveJob(store, 7, from, 'gone', 2)).not.toThrow();
    expect(() => moveJob(store, 7, 'not_started' as 'idle', 'active', 3)).toThrow(IllegalPhaseChangeError);
    expect(calls).toEqual([
      [7, 'accepted', 'posting', 1],
      [7, 'idle', 'gone', 2],
    ]);
  });

  it('of a job in a phase its caller cannot handle throws a typed error', () => {
    expect(expectPhase('creating', STILL_STARTING)).toBe('creating');
    expect(() => expectPhase('idle', POLLED)).toThrow(UnexpectedPhaseError);
  });
});

/** The product's source files, as [path, text]. */
function sources(dir = 'src'): [string, string][] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry): [string, string][] => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [[path, readFileSync(path, 'utf8')]] : [];
  });
}

describe('the code', () => {
  it('changes phases only through the table', () => {
    const direct: string[] = [];
    for (const [path, text] of sources()) {
      if (path.endsWith(join('domain', 'phases.ts')) || path.includes(`${join('src', 'store')}`)) continue;
      text.split('\n').forEach((line, i) => {
        // A phase written by hand: `phase: 'x'`, `phase: cond ? …`, or the store's transition.
        const written = /\bphase:\s*(?!job\.phase\b|JobPhase\b|string\b|expectPhase\()\S/.test(line);
        if (written || /\.transitionJob\(/.test(line)) direct.push(`${path}:${i + 1}: ${line.trim()}`);
      });
    }
    // Snapshots for a check or a log, and the narrowing of a phase already checked, are not changes.
    const allowed = [/phase: \w+\.phase[,\s}]/];
    expect(direct.filter((line) => !allowed.some((re) => re.test(line)))).toEqual([]);
  });

  it('moves a job only along the table where it names both phases', () => {
    // Every literal move in the code, e.g. `enterPhase('accepted', 'posting')`.
    const moves = sources().flatMap(([, text]) =>
      [...text.matchAll(/(?:enterPhase|moveJob)\((?:[^,()]+,\s*){0,2}'(\w+)',\s*'(\w+)'/g)].map((m) => [
        m[1] as JobPhase,
        m[2] as JobPhase,
      ]),
    );
    for (const [from, to] of moves) expect(canMove(from, to), `${from} → ${to}`).toBe(true);
  });
});
