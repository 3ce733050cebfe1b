import { STATUS_CODES } from 'node:http';
import type { Readable } from 'node:stream';
import { Agent, request } from 'undici';

/*
 * The bot's outgoing HTTP requests (the agent API, Slack's Web API), through undici's `request`:
 * the same HTTP client Node's `fetch` is built on, without the web streams, `Request` and
 * `Response` that `fetch` builds for every call and that cost several times the CPU of the
 * request itself. The bot's calls are small bodies sent whole and answers read whole.
 */

/** An answer: its status line and headers, and its body read whole (or up to a cap). */
export interface HttpAnswer {
  url: string;
  status: number;
  /** A header's value (repeated ones joined by `, `, as `fetch` joins them), null when absent. */
  header(name: string): string | null;
  headers(): [string, string][];
  /** The body, at most the cap's bytes, `truncated` when there was more. */
  body: Promise<{ bytes: Buffer; truncated: boolean }>;
}

export interface HttpRequestOptions {
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** Sent whole. */
  body?: string;
  /** Aborts the request, and the reading of its body, with the signal's reason. */
  signal?: AbortSignal;
  /**
   * Most bytes of the body read, by the answer's status (a `content-length` over it is refused
   * before reading anything); once more arrive, reading stops and the connection is dropped,
   * so no answer can fill the process's memory. Default: no cap.
   */
  maxBytes?: (status: number) => number;
  /** A redirect is answered as it is (`manual`), or fails the request (`error`); never followed. */
  redirect: 'manual' | 'error';
}

// Kept-alive connections are closed after 4 s idle, as `fetch`'s are: before a server closes them.
// At most 100 to a host at once, as many calls as Slack's Web API client let run at once: a burst
// waits for a connection instead of opening sockets without end.
const dispatcher = new Agent({ keepAliveTimeout: 4_000, keepAliveMaxTimeout: 4_000, connections: 100 });

/** What `fetch` sends when the caller does not say: a server sees the same request. */
const DEFAULT_HEADERS = { accept: '*/*', 'user-agent': 'node' };

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Drops an answer's body unread, and its connection; undici reports that as an abort, expected here. */
function drop(body: Readable): void {
  body.on('error', () => undefined);
  body.destroy();
}

/** Reads `body` whole, or up to `limit` bytes (then drops the rest and the connection). */
async function readCapped(body: Readable, limit: number): Promise<{ bytes: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if (total + chunk.byteLength > limit) {
      chunks.push(chunk.subarray(0, limit - total));
      drop(body);
      return { bytes: Buffer.concat(chunks, limit), truncated: true };
    }
    chunks.push(chunk);
    total += chunk.byteLength;
  }
  return { bytes: Buffer.concat(chunks, total), truncated: false };
}

/** Makes one request; resolves once the answer's headers arrived, its body read on. */
export async function httpRequest(url: string, options: HttpRequestOptions): Promise<HttpAnswer> {
  const headers: Record<string, string> = { ...DEFAULT_HEADERS };
  for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;
  const answer = await request(url, {
    method: options.method,
    headers,
    dispatcher,
    ...(options.body !== undefined ? { body: options.body } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const status = answer.statusCode;
  const raw = answer.headers;
  const header = (name: string) => {
    const value = raw[name.toLowerCase()];
    return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
  };
  if (options.redirect === 'error' && REDIRECTS.has(status) && header('location') !== null) {
    drop(answer.body);
    throw new TypeError('fetch failed', { cause: new Error('unexpected redirect') });
  }
  const limit = options.maxBytes?.(status) ?? Number.POSITIVE_INFINITY;
  const declared = Number(header('content-length') ?? Number.NaN);
  let body: Promise<{ bytes: Buffer; truncated: boolean }>;
  if (declared > limit) {
    drop(answer.body);
    body = Promise.resolve({ bytes: Buffer.alloc(0), truncated: true });
  } else body = readCapped(answer.body, limit);
  // Read on whether or not the caller looks at it: an answer never read would hold its connection.
  body.catch(() => undefined);
  return {
    url,
    status,
    header,
    headers: () =>
      Object.keys(raw).flatMap((name) => {
        const value = header(name);
        return value === null ? [] : [[name, value] as [string, string]];
      }),
    body,
  };
}

const utf8 = new TextDecoder();

/** The body as text, as `fetch`'s `text()` decodes it (UTF-8, a leading BOM dropped). */
export const textOf = (bytes: Buffer): string => utf8.decode(bytes);

type FetchInit = Parameters<typeof fetch>[1];

/**
 * `fetch` as Slack's Web API client uses it: a POST of a string body, redirects refused,
 * answered with what the client reads of a `Response` (status, headers, `url`, `text()`,
 * `json()`, `arrayBuffer()`). Anything else (a file upload's form, a redirect followed) goes
 * to Node's own `fetch`.
 */
export const webApiFetch: typeof fetch = async (input, init?: FetchInit) => {
  const body = init?.body;
  const redirect = init?.redirect;
  const method = init?.method ?? 'GET';
  if (
    typeof input !== 'string' ||
    (method !== 'GET' && method !== 'POST') ||
    (body !== undefined && body !== null && typeof body !== 'string') ||
    (redirect !== 'error' && redirect !== 'manual') ||
    (init?.headers !== undefined && (init.headers instanceof Headers || Array.isArray(init.headers)))
  )
    return fetch(input, init);
  const answer = await httpRequest(input, {
    method,
    headers: init?.headers as Record<string, string> | undefined,
    ...(typeof body === 'string' ? { body } : {}),
    ...(init?.signal ? { signal: init.signal } : {}),
    redirect,
  });
  const bytes = async () => (await answer.body).bytes;
  const response = {
    url: answer.url,
    status: answer.status,
    // undici's `request` gives none; Slack's client puts it in its HTTP errors.
    statusText: STATUS_CODES[answer.status] ?? '',
    ok: answer.status >= 200 && answer.status < 300,
    // What the client reads of them: `get`, and `entries` for an error's details.
    headers: {
      get: answer.header,
      has: (name: string) => answer.header(name) !== null,
      entries: () => answer.headers()[Symbol.iterator](),
    },
    text: async () => textOf(await bytes()),
    json: async () => JSON.parse(textOf(await bytes())),
    arrayBuffer: async () => {
      const all = await bytes();
      return all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength);
    },
  };
  return response as unknown as Response;
};
