import { afterEach, describe, expect, it } from 'vitest';
import { httpRequest, textOf, webApiFetch } from '../../src/util/http-request.js';
import { listen, waitFor } from '../helpers/http.js';

type Stand = Awaited<ReturnType<typeof listen>>;
let stand: Stand | undefined;
afterEach(async () => {
  await stand?.close();
  stand = undefined;
});

const read = async (answer: Awaited<ReturnType<typeof httpRequest>>) => {
  const { bytes, truncated } = await answer.body;
  return { text: textOf(bytes), truncated };
};

describe('httpRequest', () => {
  it('sends the method, headers and body as given, with what fetch adds when they are not given', async () => {
    const seen: { method?: string; headers?: Record<string, unknown>; body?: string } = {};
    stand = await listen((req, body, res) => {
      Object.assign(seen, { method: req.method, headers: req.headers, body });
      res.writeHead(201, { 'content-type': 'application/json', 'x-many': ['a', 'b'] });
      res.end('{"id":"€"}');
    });
    const answer = await httpRequest(`${stand.url}/v2/job`, {
      method: 'POST',
      headers: { Authorization: 'Bearer fake-key', 'content-type': 'application/json' },
      body: '{"prompt":"é"}',
      redirect: 'manual',
    });
    expect(seen.method).toBe('POST');
    expect(seen.body).toBe('{"prompt":"é"}');
    expect(seen.headers).toMatchObject({
      authorization: 'Bearer fake-key',
      accept: '*/*',
      'user-agent': 'node',
      'content-length': String(Buffer.byteLength('{"prompt":"é"}')),
    });
    expect(answer.status).toBe(201);
    expect(answer.header('Content-Type')).toBe('application/json');
    expect(answer.header('x-many')).toBe('a, b');
    expect(answer.header('retry-after')).toBeNull();
    expect(await read(answer)).toEqual({ text: '{"id":"€"}', truncated: false });
  });

  it('reads at most the cap of the status answered, and refuses a declared length over it unread', async () => {
    stand = await listen((req, _body, res) => {
      if (req.url === '/declared') {
        res.writeHead(500, { 'content-length': '100' });
        res.end('x'.repeat(100));
        return;
      }
      res.writeHead(200);
      res.write('a'.repeat(40_000));
      res.end('b'.repeat(40_000));
    });
    const maxBytes = (status: number) => (status === 200 ? 50_000 : 10);
    const cut = await read(await httpRequest(stand.url, { method: 'GET', redirect: 'manual', maxBytes }));
    expect(cut.truncated).toBe(true);
    expect(cut.text).toBe(`${'a'.repeat(40_000)}${'b'.repeat(10_000)}`);
    const declared = await httpRequest(`${stand.url}/declared`, {
      method: 'GET',
      redirect: 'manual',
      maxBytes,
    });
    expect(declared.status).toBe(500);
    expect(await read(declared)).toEqual({ text: '', truncated: true });
  });

  it('reads a body across chunks whole, a character split between them, up to exactly the cap', async () => {
    const euro = Buffer.from('€');
    stand = await listen((req, _body, res) => {
      res.writeHead(200);
      if (req.url === '/exact') {
        res.write('abcd');
        res.end('efgh');
        return;
      }
      res.write(Buffer.concat([Buffer.from('{"id":"'), euro.subarray(0, 1)]));
      setTimeout(() => res.end(Buffer.concat([euro.subarray(1), Buffer.from('"}')])), 5);
    });
    const whole = await read(await httpRequest(stand.url, { method: 'GET', redirect: 'manual' }));
    expect(whole).toEqual({ text: '{"id":"€"}', truncated: false });
    const exact = await httpRequest(`${stand.url}/exact`, {
      method: 'GET',
      redirect: 'manual',
      maxBytes: () => 8,
    });
    expect(await read(exact)).toEqual({ text: 'abcdefgh', truncated: false });
  });

  it('never holds an endless body: it stops at the cap and drops the connection', async () => {
    let closed = false;
    stand = await listen((_req, _body, res) => {
      res.writeHead(200);
      res.on('close', () => {
        closed = true;
      });
      const more = () => {
        if (closed) return;
        res.write('a'.repeat(4_096));
        setImmediate(more);
      };
      more();
    });
    const answer = await httpRequest(stand.url, {
      method: 'GET',
      redirect: 'manual',
      maxBytes: () => 10_000,
    });
    expect(await read(answer)).toEqual({ text: 'a'.repeat(10_000), truncated: true });
    await waitFor('the server sees the connection dropped', () => closed);
  });

  it('answers a redirect as it is when manual, and fails the request when redirects are errors', async () => {
    stand = await listen((_req, _body, res) => {
      res.writeHead(302, { location: 'http://elsewhere.invalid/' });
      res.end();
    });
    const manual = await httpRequest(stand.url, { method: 'POST', body: 'x', redirect: 'manual' });
    expect(manual.status).toBe(302);
    await expect(httpRequest(stand.url, { method: 'POST', body: 'x', redirect: 'error' })).rejects.toThrow(
      'fetch failed',
    );
  });

  it("aborts with the signal's reason, before the answer and while its body is read", async () => {
    stand = await listen((req, _body, res) => {
      if (req.url === '/slow-body') {
        res.writeHead(200);
        res.write('part');
        return;
      }
      // Never answers.
    });
    await expect(
      httpRequest(stand.url, { method: 'GET', redirect: 'manual', signal: AbortSignal.timeout(50) }),
    ).rejects.toMatchObject({ name: 'TimeoutError' });
    const answer = await httpRequest(`${stand.url}/slow-body`, {
      method: 'GET',
      redirect: 'manual',
      signal: AbortSignal.timeout(100),
    });
    await expect(answer.body).rejects.toMatchObject({ name: 'TimeoutError' });
  });

  it('fails a body cut off by the server, and a refused connection with its code', async () => {
    stand = await listen((_req, _body, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('short');
      setTimeout(() => res.socket?.destroy(), 10);
    });
    const answer = await httpRequest(stand.url, { method: 'GET', redirect: 'manual' });
    await expect(answer.body).rejects.toThrow();
    const url = stand.url;
    await stand.close();
    stand = undefined;
    await expect(httpRequest(url, { method: 'GET', redirect: 'manual' })).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    });
  });

  it('asks for no compression: the answers are read as sent', async () => {
    let asked: string | undefined = 'unset';
    stand = await listen((req, _body, res) => {
      asked = req.headers['accept-encoding'];
      res.writeHead(200);
      res.end('{"ok":true}');
    });
    expect(await read(await httpRequest(stand.url, { method: 'GET', redirect: 'manual' }))).toEqual({
      text: '{"ok":true}',
      truncated: false,
    });
    expect(asked).toBeUndefined();
  });
});

describe('webApiFetch', () => {
  it('answers with what the Web API client reads of a Response', async () => {
    stand = await listen((_req, body, res) => {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '3' });
      res.end(JSON.stringify({ ok: false, body }));
    });
    const response = await webApiFetch(`${stand.url}/api/chat.postMessage`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'channel=C1&text=hi',
      redirect: 'error',
    });
    expect(response.status).toBe(429);
    expect(response.statusText).toBe('Too Many Requests');
    expect(response.url).toBe(`${stand.url}/api/chat.postMessage`);
    expect(response.headers.get('Retry-After')).toBe('3');
    expect(Object.fromEntries(response.headers.entries())).toMatchObject({ 'retry-after': '3' });
    expect(await response.json()).toEqual({ ok: false, body: 'channel=C1&text=hi' });
  });

  it('leaves what it does not handle (a form, a redirect followed) to fetch', async () => {
    stand = await listen((req, _body, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(req.headers['content-type']?.split(';')[0]);
    });
    const form = new FormData();
    form.append('file', 'content');
    const response = await webApiFetch(stand.url, { method: 'POST', body: form, redirect: 'error' });
    expect(response).toBeInstanceOf(Response);
    expect(await response.text()).toBe('multipart/form-data');
  });
});
