import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/** A loopback HTTP server for stand-ins; `handle` answers every request. */
export async function listen(
  handle: (req: IncomingMessage, body: string, res: ServerResponse) => void | Promise<void>,
): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const sockets = new Set<import('node:net').Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      Promise.resolve(handle(req, Buffer.concat(chunks).toString('utf8'), res)).catch((error) => {
        if (!res.headersSent) {
          res.writeHead(500, { 'content-type': 'text/plain' });
        }
        res.end(String(error));
      });
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Resolves when `check` returns a truthy value; fails with `what` after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => T | Promise<T>,
  timeoutMs = 5_000,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What a stranger might send to the app's public address: any method, any raw request target. */
export interface RawRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/** Sends one request with the target exactly as given (fetch would normalise it); resolves with the status and body. */
export function rawRequest(port: number, r: RawRequest): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, method: r.method, path: r.path, headers: r.headers, agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end(r.body);
  });
}

/** Requests a browser, a scanner or a confused client sends to a public URL. */
export const STRAY_REQUESTS: readonly (RawRequest & { expect: number })[] = [
  { method: 'GET', path: '/', expect: 404 },
  { method: 'GET', path: '/favicon.ico', expect: 404 },
  { method: 'GET', path: '/wp-login.php?redirect_to=%2Fwp-admin', expect: 404 },
  { method: 'POST', path: '/wp-login.php', body: 'log=admin&pwd=admin', expect: 404 },
  { method: 'GET', path: '/metrics', expect: 404 },
  { method: 'GET', path: '//', expect: 404 },
  { method: 'GET', path: '/%E0%A4%A', expect: 404 },
  { method: 'GET', path: '/slack/events/../../etc/passwd', expect: 404 },
  { method: 'HEAD', path: '/', expect: 404 },
  { method: 'OPTIONS', path: '*', expect: 404 },
  { method: 'GET', path: '/slack/events', expect: 405 },
  { method: 'PUT', path: '/slack/events', body: '{}', expect: 405 },
  { method: 'DELETE', path: '/healthz', expect: 405 },
  { method: 'POST', path: '/healthz', body: 'x', expect: 405 },
];
