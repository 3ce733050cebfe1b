import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { startApp } from '../src/app.js';
import { readConfig } from '../src/config/config.js';
import { createLogger } from '../src/logging/logger.js';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { type Harness, settled, tempDatabase, testEnv, useHarness } from './helpers/harness.js';
import { rawRequest } from './helpers/http.js';

/** The log lines the app wrote, parsed. */
const parsed = (h: Harness) => h.logs.map((l) => JSON.parse(l) as Record<string, unknown>);

describe('the app, started and stopped', () => {
  // Each test its own app: one of them stops it.
  const h = useHarness();

  it('serves on the port it reports once ready, and says so once, with what warming did', async () => {
    expect(h.app.port).toBeGreaterThan(0);
    expect((await rawRequest(h.app.port, { method: 'GET', path: '/healthz' })).status).toBe(200);
    const ready = parsed(h).filter((l) => l.msg === 'docs-agent is ready');
    expect(ready).toHaveLength(1);
    expect(ready[0]).toMatchObject({
      level: 'info',
      mode: 'http',
      port: h.app.port,
      pollIntervalMs: 40,
      metrics: false,
      instanceId: expect.any(String),
      warmUp: { rehearsals: expect.any(Number), requests: expect.any(Number), ms: expect.any(Number) },
    });
    // Registered in the store before serving: its instance is live.
    expect(await h.app.store.liveInstances(30_000)).toBeGreaterThanOrEqual(1);
    await settled(h.app);
    expect(h.app.backgroundTasks).toBe(0);
  });

  it('stops once however often asked: unready first, then the port and the store closed, "stopped" last', async () => {
    const app = h.app;
    const first = app.stop();
    expect(app.stop()).toBe(first);
    await first;
    await expect(rawRequest(app.port, { method: 'GET', path: '/healthz' })).rejects.toThrow(/ECONNREFUSED/);
    await expect(app.store.getJob(1)).rejects.toThrow();
    const messages = parsed(h).map((l) => l.msg);
    const at = (msg: string) => messages.indexOf(msg);
    expect(at('shutting down')).toBeGreaterThan(at('docs-agent is ready'));
    expect(at('receiver stopped')).toBeGreaterThan(at('shutting down'));
    expect(at('tasks drained')).toBeGreaterThan(at('receiver stopped'));
    expect(at('poller, outbox, retention sweep and checkpoints stopped')).toBeGreaterThan(
      at('tasks drained'),
    );
    expect(messages.at(-1)).toBe('stopped');
    expect(messages.filter((m) => m === 'stopped')).toHaveLength(1);
  });
});

describe('an app that cannot start', () => {
  let taken: Server | undefined;
  afterAll(async () => {
    await new Promise((resolve) => taken?.close(resolve));
  });

  it('rejects naming the cause when its port is taken', async () => {
    taken = createServer();
    await new Promise<void>((resolve) => taken?.listen(0, '0.0.0.0', resolve));
    const { port } = taken.address() as AddressInfo;
    const store = openSqliteStore(tempDatabase());
    const config = readConfig(
      testEnv({ apiUrl: 'http://127.0.0.1:9/api/' }, { url: 'http://127.0.0.1:9' }, tempDatabase(), {
        PORT: String(port),
      }),
    );
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug', secrets: [], write: (l) => lines.push(l) });
    await expect(startApp(config, { logger, store })).rejects.toThrow(/EADDRINUSE/);
    expect(lines.join('\n')).not.toContain('docs-agent is ready');
    await store.close();
  });
});
