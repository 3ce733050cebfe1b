import { afterEach, describe, expect, it } from 'vitest';
import type { RunOutcome, Store } from '../../src/store/types.js';
import { bothEngines, postgresAvailable } from '../helpers/postgres.js';
import { createRun, newJob, T0 } from './store-contract.js';

const server = await postgresAvailable();
const engines = bothEngines(server);

for (const [engine, open] of engines) {
  describe(`run lengths (${engine})`, () => {
    let store: Store | undefined;
    afterEach(async () => {
      await store?.close();
      store = undefined;
    });

    /** A job of `projectId` whose first run was sent at `sentAt` and ended with `outcome` `lengthMs` later. */
    async function ranFor(
      s: Store,
      key: string,
      projectId: string | null,
      sentAt: number,
      lengthMs: number | null,
      outcome: RunOutcome = 'completed_pr',
    ) {
      const { job, run } = await s.insertJob(newJob(key, { projectId }), createRun(), sentAt);
      const ended = lengthMs === null ? {} : { outcome, outcomeAt: sentAt + lengthMs };
      await s.apply(
        { jobId: job.id, run: { id: run.id, patch: { state: 'sent', sentAt, ...ended } } },
        sentAt,
      );
    }

    it('gives the project’s latest runs the agent ended, newest first, at most as many as asked', async () => {
      store = await open();
      await ranFor(store, 'a', 'proj_docs', T0, 60_000);
      await ranFor(store, 'b', 'proj_docs', T0 + 1_000, 240_000, 'completed_no_changes');
      await ranFor(store, 'c', 'proj_docs', T0 + 2_000, 90_000, 'failed');
      // Still running, archived, gone or unwatched: nothing said about how long the agent takes.
      await ranFor(store, 'd', 'proj_docs', T0, null);
      await ranFor(store, 'e', 'proj_docs', T0, 5_000, 'archived');
      await ranFor(store, 'f', 'proj_docs', T0, 5_000, 'gone');
      await ranFor(store, 'g', 'proj_docs', T0, 9_000_000, 'stopped_watching');
      // Another project's, and the default project's, are their own.
      await ranFor(store, 'h', 'proj_api', T0, 7_000);
      await ranFor(store, 'i', null, T0, 8_000);

      expect(await store.runLengths('proj_docs', 10)).toEqual([240_000, 90_000, 60_000]);
      expect(await store.runLengths('proj_docs', 2)).toEqual([240_000, 90_000]);
      expect(await store.runLengths('proj_api', 10)).toEqual([7_000]);
      expect(await store.runLengths(null, 10)).toEqual([8_000]);
      expect(await store.runLengths('proj_none', 10)).toEqual([]);
    });
  });
}
