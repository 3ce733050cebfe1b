import { afterEach, describe, expect, it } from 'vitest';
import { createFrontServer, type FrontServer } from '../../src/http/front-server.js';
import { createLogger } from '../../src/logging/logger.js';
import { metricsRoute } from '../../src/metrics/metrics-route.js';
import { rawRequest } from '../helpers/http.js';

const TOKEN = 'metrics-test-token-0000';
const EXPOSITION = '# HELP docs_agent_example An example.\ndocs_agent_example 1\n';

describe('GET /metrics behind a bearer token', () => {
  let front: FrontServer | undefined;
  afterEach(async () => {
    await front?.stop();
    front = undefined;
  });

  /** Serves the route alone; records each render and every log line (at debug). */
  async function serve() {
    const lines: string[] = [];
    let renders = 0;
    const logger = createLogger({ level: 'debug', secrets: [], write: (l) => lines.push(l) });
    const route = metricsRoute({
      token: TOKEN,
      logger,
      metrics: {
        async render() {
          renders++;
          return { contentType: 'text/plain; version=0.0.4; charset=utf-8', body: EXPOSITION };
        },
      },
    });
    front = createFrontServer([route], logger);
    const port = await front.listen(0);
    const get = async (authorization?: string) => {
      const res = await fetch(`http://127.0.0.1:${port}/metrics`, {
        headers: authorization === undefined ? {} : { authorization },
      });
      return { res, body: await res.text() };
    };
    return { get, port, lines, renders: () => renders };
  }

  it('serves the exposition to the right token, uncached, with its content type and length', async () => {
    const { get, renders } = await serve();
    for (const header of [`Bearer ${TOKEN}`, `bearer ${TOKEN}`, `BEARER   ${TOKEN}  `]) {
      const { res, body } = await get(header);
      expect(res.status, header).toBe(200);
      expect(body).toBe(EXPOSITION);
      expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(EXPOSITION)));
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
    expect(renders()).toBe(3);
  });

  it('refuses anything else with a Bearer challenge, without computing the metrics or logging what was sent', async () => {
    const { get, port, lines, renders } = await serve();
    const wrong = [
      undefined,
      '',
      'Bearer',
      'Bearer ',
      `Bearer ${TOKEN.slice(0, -1)}`,
      `Bearer ${TOKEN}0`,
      `Bearer ${TOKEN} ${TOKEN}`,
      `Bearer\t${TOKEN}`,
      `Token ${TOKEN}`,
      `${TOKEN}`,
      `Bearer ${TOKEN.toUpperCase()}`,
      'Bearer guess-not-a-real-token-9999',
    ];
    for (const header of wrong) {
      const { res, body } = await get(header);
      expect(res.status, String(header)).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      expect(body).toBe('unauthorized');
    }
    // A query string carrying the token is no way in either.
    expect((await rawRequest(port, { method: 'GET', path: `/metrics?token=${TOKEN}` })).status).toBe(401);
    expect(renders()).toBe(0);
    expect(lines.length).toBeGreaterThan(0);
    const logged = lines.join('\n');
    expect(logged).not.toContain(TOKEN.slice(0, 12));
    expect(logged).not.toContain('guess-not-a-real-token');
  });
});
