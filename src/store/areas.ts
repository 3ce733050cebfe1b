import { assistantThreadMethods } from './assistant-threads.js';
import { clusterMethods } from './cluster-store.js';
import { feedbackMethods } from './feedback.js';
import { insertJob } from './inserts.js';
import { jobMethods } from './jobs.js';
import { outboxMethods } from './outbox.js';
import { pullRequestMethods } from './pull-requests.js';
import { RehearsalUndone, undone } from './rehearsal.js';
import { eraseExpired } from './retention.js';
import { parseFigures, parseProjectUses } from './rows.js';
import { type Engine, type Operation, tx } from './statements.js';
import type { NewJob, NewRun, Store, StoreFigures } from './types.js';
import { useMethods, usesPerProject } from './uses.js';

/** The metrics endpoint's figures, both reads in one transaction: they see the same moment. */
function* figures(since: number, timeoutMs: number): Operation<StoreFigures> {
  const counts = yield* tx.one('figures', { timeoutMs }, parseFigures);
  if (!counts) throw new Error('the figures query returned no row');
  return {
    ...counts,
    uses: usesPerProject(yield* tx.many('instructionsSince', { since }, parseProjectUses)),
  };
}

/** A job's insert, ended by throwing, so that its transaction rolls back. */
function* rehearsed(job: NewJob, firstRun: NewRun, now: number): Operation<never> {
  yield* insertJob(job, firstRun, now);
  throw new RehearsalUndone();
}

/**
 * The store, written once for both engines over their {@link Engine}: every area's methods (and
 * here the App Home's two, the figures and the rehearsal). Each engine adds only its connection's
 * own: checkpoints and closing, and what its transactions do differently.
 */
export function storeAreas(engine: Engine): Omit<Store, 'checkpoint' | 'close'> {
  return {
    shared: engine.shared,
    ...clusterMethods(engine),
    ...jobMethods(engine),
    ...outboxMethods(engine),
    ...useMethods(engine),
    ...assistantThreadMethods(engine),
    ...feedbackMethods(engine),
    ...pullRequestMethods(engine),
    async recordHomeOpened(userId, teamId, now) {
      await engine.write('recordHomeOpened', { userId, teamId, now });
    },
    homeOpened: async (userId) => (await engine.one('homeOpened', { userId }, (row) => row)) !== undefined,
    figures: (since, timeoutMs) => engine.transaction(figures(since, timeoutMs)),
    eraseExpired: (before, erasedInstruction, now, limit) =>
      engine.transaction(eraseExpired(before, erasedInstruction, now, limit)),
    rehearseInsert: (job, firstRun, now) => undone(() => engine.transaction(rehearsed(job, firstRun, now))),
  };
}
