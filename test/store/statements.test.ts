import { describe, expect, it } from 'vitest';
import type { Params } from '../../src/store/queries.js';
import {
  type Operation,
  runAtOnce,
  runAwaited,
  type TransactionStatements,
  tx,
} from '../../src/store/statements.js';

/** Statements that answer from a script, and say what they were asked, in order. */
function scripted(answer: (what: string, params: Params) => unknown) {
  const asked: string[] = [];
  const statements: TransactionStatements = {
    one: (name, params, parse) => {
      asked.push(`one ${name}`);
      const row = answer(name, params);
      return row === undefined ? undefined : parse(row as never);
    },
    many: (name, params, parse) => {
      asked.push(`many ${name}`);
      return (answer(name, params) as never[]).map(parse);
    },
    write: (name, params) => {
      asked.push(`write ${name}`);
      return answer(name, params) as number;
    },
    update: (table, id) => {
      asked.push(`update ${table} ${id}`);
      return 1;
    },
    lock: (name) => {
      asked.push(`lock ${name}`);
    },
  };
  const awaited: TransactionStatements = {
    one: async (...args) => statements.one(...args),
    many: async (...args) => statements.many(...args),
    write: async (...args) => statements.write(...args),
    update: async (...args) => statements.update(...args),
    lock: async (...args) => statements.lock(...args),
  };
  return { asked, statements, awaited };
}

/** An operation of every kind of step, whose answer depends on each result handed back. */
function* operation(): Operation<string> {
  yield* tx.lock('lockJobPostgres', { jobId: 1 });
  const job = yield* tx.one('jobById', { jobId: 1 }, (row) => row as { id: number });
  const runs = yield* tx.many('runsOfJob', { jobId: job?.id ?? 0 }, (row) => row as { id: number });
  const moved = yield* tx.write('transitionJob', { jobId: 1 });
  const patched = yield* tx.update('jobs', 1, { phase: 'idle' });
  return `job ${job?.id}, runs ${runs.map((r) => r.id).join('+')}, moved ${moved}, patched ${patched}`;
}

const answers = (name: string) =>
  ({ jobById: { id: 1 }, runsOfJob: [{ id: 2 }, { id: 3 }], transitionJob: 1 })[name];
const STEPS = [
  'lock lockJobPostgres',
  'one jobById',
  'many runsOfJob',
  'write transitionJob',
  'update jobs 1',
];

describe('an operation written once', () => {
  it('runs at once, each statement’s result handed back as it comes (SQLite)', () => {
    const { asked, statements } = scripted(answers);
    expect(runAtOnce(operation(), statements)).toBe('job 1, runs 2+3, moved 1, patched 1');
    expect(asked).toEqual(STEPS);
  });

  it('runs awaited, each statement’s result awaited before the next is asked (PostgreSQL)', async () => {
    const { asked, awaited } = scripted(answers);
    const running = runAwaited(operation(), awaited);
    // Only the first statement has been asked until its answer arrives.
    expect(asked).toEqual(['lock lockJobPostgres']);
    expect(await running).toBe('job 1, runs 2+3, moved 1, patched 1');
    expect(asked).toEqual(STEPS);
  });

  it('stops at a statement that fails, asking nothing after it', async () => {
    const failing = (name: string) => {
      if (name === 'runsOfJob') throw new Error('the statement failed');
      return answers(name);
    };
    const atOnce = scripted(failing);
    expect(() => runAtOnce(operation(), atOnce.statements)).toThrow('the statement failed');
    expect(atOnce.asked).toEqual(STEPS.slice(0, 3));
    const awaited = scripted(failing);
    await expect(runAwaited(operation(), awaited.awaited)).rejects.toThrow('the statement failed');
    expect(awaited.asked).toEqual(STEPS.slice(0, 3));
  });
});
