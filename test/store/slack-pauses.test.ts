import { afterEach, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { Store } from '../../src/store/types.js';
import { bothEngines, freshSchemaUrl, postgresAvailable } from '../helpers/postgres.js';

const server = await postgresAvailable();
const engines = bothEngines(server);

for (const [engine, open] of engines) {
  describe(`Slack's waits, shared by the store (${engine})`, () => {
    let store: Store | undefined;
    afterEach(async () => {
      await store?.close();
      store = undefined;
    });

    it('keeps the longest wait told for a scope, each scope its own, on the store’s clock', async () => {
      store = await open();
      expect(await store.slackPauses()).toEqual([]);
      await store.pauseSlack('chat.update', 30_000);
      await store.pauseSlack('chat.update', 5_000);
      await store.pauseSlack('chat.postMessage:C0DOCS', 60_000);
      const pauses = await store.slackPauses();
      expect(pauses.map((p) => p.scope).sort()).toEqual(['chat.postMessage:C0DOCS', 'chat.update']);
      const left = (scope: string) => pauses.find((p) => p.scope === scope)?.leftMs ?? 0;
      expect(left('chat.update')).toBeGreaterThan(25_000);
      expect(left('chat.update')).toBeLessThanOrEqual(30_000);
      expect(left('chat.postMessage:C0DOCS')).toBeGreaterThan(55_000);
      // A longer wait replaces a shorter one.
      await store.pauseSlack('chat.update', 90_000);
      expect((await store.slackPauses()).find((p) => p.scope === 'chat.update')?.leftMs).toBeGreaterThan(
        85_000,
      );
    });

    it('forgets a wait that has run out', async () => {
      store = await open();
      await store.pauseSlack('reactions.add', 0);
      expect(await store.slackPauses()).toEqual([]);
    });
  });
}

describe.runIf(server.ok)("Slack's waits across instances on PostgreSQL", () => {
  it('are seen by every instance of the store', async () => {
    const url = await freshSchemaUrl();
    const one = await openPostgresStore(url, { max: 2 });
    const other = await openPostgresStore(url, { max: 2 });
    try {
      await one.pauseSlack('agents.sessions.setStatus', 20_000);
      expect((await other.slackPauses()).map((p) => p.scope)).toEqual(['agents.sessions.setStatus']);
    } finally {
      await one.close();
      await other.close();
    }
  });
});
