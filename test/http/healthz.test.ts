import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { healthzRoute } from '../../src/http/healthz.js';

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
