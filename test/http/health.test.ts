import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createHealth, healthzRoute } from '../../src/http/health.js';

describe('createHealth', () => {
  it('remembers when the agent API last answered with success, and only then', () => {
    let now = 1_000;
    const health = createHealth(() => now);
    expect(health.startedAt).toBe(1_000);
    expect(health.lastAgentSuccessAt()).toBeUndefined();
    now = 2_000;
    health.agentAnswered(200);
    now = 3_000;
    for (const status of [199, 300, 429, 500]) health.agentAnswered(status);
    expect(health.lastAgentSuccessAt()).toBe(2_000);
    now = 4_000;
    health.agentAnswered(299);
    expect(health.lastAgentSuccessAt()).toBe(4_000);
  });

  it('says whether the poller runs', () => {
    const health = createHealth(() => 0);
    expect(health.pollerRunning()).toBe(false);
    health.setPollerRunning(true);
    expect(health.pollerRunning()).toBe(true);
    health.setPollerRunning(false);
    expect(health.pollerRunning()).toBe(false);
  });
});

/** The route's answer to a GET, as status and JSON body. */
function answer(ready: boolean) {
  const sent: { status?: number; headers?: unknown; body?: string } = {};
  const res = {
    writeHead(status: number, headers: unknown) {
      sent.status = status;
      sent.headers = headers;
    },
    end(body: string) {
      sent.body = body;
    },
  } as unknown as ServerResponse;
  healthzRoute(() => ready).handle({} as IncomingMessage, res);
  return { status: sent.status, headers: sent.headers, body: JSON.parse(sent.body ?? 'null') };
}

describe('/healthz', () => {
  it('answers 200 once ready, 503 before', () => {
    expect(answer(true)).toEqual({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: { status: 'ok' },
    });
    expect(answer(false)).toMatchObject({ status: 503, body: { status: 'unavailable' } });
  });

  it('serves GET /healthz only', () => {
    expect(healthzRoute(() => true)).toMatchObject({ method: 'GET', path: '/healthz' });
  });
});
