import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  answerPlain,
  createFrontServer,
  type FrontServer,
  pathOf,
  REQUEST_TIMEOUT_MS,
  type Route,
  STOP_GRACE_MS,
} from '../../src/http/front-server.js';
import { createLogger } from '../../src/logging/logger.js';
import { rawRequest } from '../helpers/http.js';

describe('the front server', () => {
  const servers: FrontServer[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.stop();
  });

  async function serve(routes: Route[]) {
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug', secrets: [], write: (l) => lines.push(l) });
    const front = createFrontServer(routes, logger);
    servers.push(front);
    const port = await front.listen(0);
    return { front, port, lines, logged: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
  }

  const ok =
    (text: string): Route['handle'] =>
    (req, res) =>
      answerPlain(req, res, 200, text);

  /** A server whose `GET /slow` answers `done` only once released; `inHandler` settles when it is reached. */
  async function serveHeld() {
    let release = () => {};
    let started = () => {};
    const inHandler = new Promise<void>((resolve) => (started = resolve));
    const { port, front } = await serve([
      {
        method: 'GET',
        path: '/slow',
        handle: async (req, res) => {
          started();
          await new Promise<void>((resolve) => (release = resolve));
          answerPlain(req, res, 200, 'done');
        },
      },
    ]);
    return { port, front, inHandler, release: () => release() };
  }

  it('routes by exact path and method, ignoring the query, and serves HEAD from a GET route', async () => {
    const { port } = await serve([
      { method: 'GET', path: '/status', handle: ok('status') },
      { method: 'POST', path: '/status', handle: ok('posted') },
      { method: 'POST', path: '/events', handle: ok('event') },
    ]);
    expect(await rawRequest(port, { method: 'GET', path: '/status?verbose=1#x' })).toEqual({
      status: 200,
      body: 'status',
    });
    expect(await rawRequest(port, { method: 'post', path: '/status' })).toEqual({
      status: 200,
      body: 'posted',
    });
    expect(await rawRequest(port, { method: 'HEAD', path: '/status' })).toEqual({ status: 200, body: '' });
    expect((await rawRequest(port, { method: 'GET', path: '/status/' })).status).toBe(404);
    expect((await rawRequest(port, { method: 'GET', path: '/STATUS' })).status).toBe(404);
    expect((await rawRequest(port, { method: 'HEAD', path: '/events' })).status).toBe(405);
  });

  it('answers 404 for an unknown path and 405 naming each allowed method once, logging a bounded path', async () => {
    const { port, logged } = await serve([
      { method: 'POST', path: '/events', handle: ok('a') },
      { method: 'POST', path: '/events', handle: ok('b') },
      { method: 'GET', path: '/events', handle: ok('c') },
    ]);
    const long = `/${'a'.repeat(500)}`;
    expect(await rawRequest(port, { method: 'GET', path: long })).toEqual({ status: 404, body: 'not found' });
    const res = await fetch(`http://127.0.0.1:${port}/events`, { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST, GET');
    expect(await res.text()).toBe('method not allowed');
    const lines = logged().filter((l) => l.msg === 'request the app does not serve');
    expect(lines).toHaveLength(2);
    expect(lines[0]?.path).toBe(long.slice(0, 120));
    expect(lines[1]).toMatchObject({ method: 'DELETE', path: '/events' });
  });

  it('answers 500 to a handler that throws or rejects, and keeps serving', async () => {
    const { port, logged } = await serve([
      {
        method: 'GET',
        path: '/throws',
        handle: () => {
          throw new Error('handler bug');
        },
      },
      { method: 'GET', path: '/rejects', handle: async () => Promise.reject(new Error('async handler bug')) },
      { method: 'GET', path: '/fine', handle: ok('fine') },
    ]);
    expect(await rawRequest(port, { method: 'GET', path: '/throws' })).toEqual({
      status: 500,
      body: 'internal error',
    });
    expect((await rawRequest(port, { method: 'GET', path: '/rejects' })).status).toBe(500);
    expect((await rawRequest(port, { method: 'GET', path: '/fine' })).status).toBe(200);
    const errors = logged().filter((l) => l.msg === 'an HTTP handler failed');
    expect(errors.map((l) => l.path)).toEqual(['/throws', '/rejects']);
  });

  it('cuts the connection of a handler that fails after its answer began, instead of a second answer', async () => {
    const { port } = await serve([
      {
        method: 'GET',
        path: '/half',
        handle: async (_req, res) => {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.write('partial');
          throw new Error('failed mid-answer');
        },
      },
    ]);
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (answer += d));
    socket.on('error', () => undefined);
    socket.write('GET /half HTTP/1.1\r\nhost: x\r\n\r\n');
    await new Promise((resolve) => socket.once('close', resolve));
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer).toContain('partial');
    expect(answer).not.toContain('500');
  });

  it('answers a malformed request 400 and keeps serving, with request time-outs set', async () => {
    const { port, front } = await serve([{ method: 'GET', path: '/fine', handle: ok('fine') }]);
    expect(front.server.requestTimeout).toBe(REQUEST_TIMEOUT_MS);
    expect(front.server.headersTimeout).toBe(REQUEST_TIMEOUT_MS);
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (answer += d));
    socket.write('NOT A REQUEST\r\n\r\n');
    await new Promise((resolve) => socket.once('close', resolve));
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect((await rawRequest(port, { method: 'GET', path: '/fine' })).status).toBe(200);
  });

  it('refuses to listen on a port already taken, and stops when it never listened', async () => {
    const { port } = await serve([]);
    const second = createFrontServer(
      [],
      createLogger({ level: 'error', secrets: [], write: () => undefined }),
    );
    await expect(second.listen(port)).rejects.toThrow(/EADDRINUSE/);
    await second.stop();
  });

  it('on stop, lets a request in flight finish before it resolves', async () => {
    const { port, front, inHandler, release } = await serveHeld();
    const answer = rawRequest(port, { method: 'GET', path: '/slow' });
    await inHandler;
    let stopped = false;
    const stopping = front.stop().then(() => {
      stopped = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(stopped).toBe(false);
    release();
    expect(await answer).toEqual({ status: 200, body: 'done' });
    await stopping;
    expect(front.server.listening).toBe(false);
  });

  it('on stop, closes a kept-alive connection once its request in flight is answered, without waiting out the grace', async () => {
    const { port, front, inHandler, release } = await serveHeld();
    // fetch keeps its connection alive for the next request, as Slack's clients do.
    const answer = fetch(`http://127.0.0.1:${port}/slow`);
    await inHandler;
    const stopping = front.stop();
    release();
    const res = await answer;
    expect(await res.text()).toBe('done');
    expect(res.headers.get('connection')).toBe('close');
    const before = performance.now();
    await stopping;
    expect(performance.now() - before).toBeLessThan(STOP_GRACE_MS / 2);
  });
});

describe('pathOf', () => {
  it('is the target without its query or fragment, and never throws on what a stranger sends', () => {
    expect(pathOf('/slack/events?x=1')).toBe('/slack/events');
    expect(pathOf('/healthz#top')).toBe('/healthz');
    expect(pathOf('/%E0%A4%A')).toBe('/%E0%A4%A');
    expect(pathOf('http://[bad')).toBe('http://[bad');
    expect(pathOf('*')).toBe('*');
    expect(pathOf(undefined)).toBe('');
    expect(pathOf('?only=query')).toBe('');
  });
});
