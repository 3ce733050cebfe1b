import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';

/*
 * The bot's outgoing HTTP requests (the agent API, Slack's Web API), on Node's own `http` and
 * `https` with kept-alive connections. Node's `fetch` builds web streams, a `Request` and a
 * `Response` for every call, which cost several times the CPU of the request itself; the bot's
 * calls are small bodies sent whole and answers read whole, so none of that is needed.
 */

/** An answer: its status line and headers, and its body read whole (or up to a cap). */
export interface HttpAnswer {
  url: string;
  status: number;
  statusText: string;
  /** A header's value (repeated ones joined by `, `, as `fetch` joins them), null when absent. */
  header(name: string): string | null;
  headers(): [string, string][];
  /** The body, decompressed; at most the cap's bytes, `truncated` when there was more. */
  body: Promise<{ bytes: Buffer; truncated: boolean }>;
}

export interface HttpRequestOptions {
  method: string;
  headers?: Record<string, string>;
  /** Sent whole (`content-length`). */
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
const agents = {
  'http:': new http.Agent({ keepAlive: true, timeout: 4_000 }),
  'https:': new https.Agent({ keepAlive: true, timeout: 4_000 }),
};

/** What `fetch` sends when the caller does not say: a server sees the same request. */
const DEFAULT_HEADERS = { accept: '*/*', 'user-agent': 'node' };

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** The decompressor for a `content-encoding`, as `fetch` decodes them; undefined: none. */
function decoderOf(
  encoding: string | undefined,
): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | undefined {
  switch (encoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip({
        flush: zlib.constants.Z_SYNC_FLUSH,
        finishFlush: zlib.constants.Z_SYNC_FLUSH,
      });
    case 'deflate':
      return zlib.createInflate();
    case 'br':
      return zlib.createBrotliDecompress();
    default:
      return undefined;
  }
}

/** Reads `stream` whole, or up to `limit` bytes (then destroys `source`, dropping the connection). */
function readAll(
  stream: Readable,
  source: http.IncomingMessage,
  limit: number,
): Promise<{ bytes: Buffer; truncated: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    stream.on('data', (chunk: Buffer) => {
      if (total + chunk.byteLength > limit) {
        chunks.push(chunk.subarray(0, limit - total));
        stream.removeAllListeners('data');
        // Settled first: dropping the connection reports it aborted, at once.
        resolve({ bytes: Buffer.concat(chunks, limit), truncated: true });
        source.destroy();
        if (stream !== source) stream.destroy();
        return;
      }
      chunks.push(chunk);
      total += chunk.byteLength;
    });
    stream.on('end', () => resolve({ bytes: Buffer.concat(chunks, total), truncated: false }));
    stream.on('error', reject);
    // A connection that closed before the whole body came is an error, not a short body.
    source.on('aborted', () => reject(source.errored ?? new Error('the answer was cut off')));
    source.on('error', reject);
  });
}

/** Makes one request; resolves once the answer's headers arrived, its body read on. */
export function httpRequest(url: string, options: HttpRequestOptions): Promise<HttpAnswer> {
  const { signal } = options;
  return new Promise<HttpAnswer>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const target = new URL(url);
    const agent = target.protocol === 'https:' ? agents['https:'] : agents['http:'];
    const transport = target.protocol === 'https:' ? https : http;
    const headers: Record<string, string | number> = { ...DEFAULT_HEADERS };
    for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;
    if (options.body !== undefined) headers['content-length'] = Buffer.byteLength(options.body);
    let response: http.IncomingMessage | undefined;
    const onAbort = () => {
      request.destroy(signal?.reason);
      response?.destroy(signal?.reason);
    };
    const done = () => signal?.removeEventListener('abort', onAbort);
    const request = transport.request(target, { method: options.method, headers, agent }, (res) => {
      response = res;
      const status = res.statusCode ?? 0;
      const raw = res.headers;
      const header = (name: string) => {
        const value = raw[name.toLowerCase()];
        return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
      };
      if (options.redirect === 'error' && REDIRECTS.has(status) && header('location') !== null) {
        res.destroy();
        done();
        reject(new TypeError('fetch failed', { cause: new Error('unexpected redirect') }));
        return;
      }
      const limit = options.maxBytes?.(status) ?? Number.POSITIVE_INFINITY;
      const declared = Number(header('content-length') ?? Number.NaN);
      let body: Promise<{ bytes: Buffer; truncated: boolean }>;
      if (declared > limit) {
        res.destroy();
        body = Promise.resolve({ bytes: Buffer.alloc(0), truncated: true });
      } else {
        const decoder = decoderOf(header('content-encoding') ?? undefined);
        body = readAll(decoder ? res.pipe(decoder) : res, res, limit);
      }
      body.then(done, done);
      // Read on whether or not the caller looks at it: an answer never read would hold its connection.
      body.catch(() => undefined);
      resolve({
        url,
        status,
        statusText: res.statusMessage ?? '',
        header,
        headers: () =>
          Object.keys(raw).flatMap((name) => {
            const value = header(name);
            return value === null ? [] : [[name, value] as [string, string]];
          }),
        body,
      });
    });
    signal?.addEventListener('abort', onAbort, { once: true });
    request.on('error', (error) => {
      done();
      reject(error);
    });
    request.end(options.body);
  });
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
  if (
    typeof input !== 'string' ||
    (body !== undefined && body !== null && typeof body !== 'string') ||
    (redirect !== 'error' && redirect !== 'manual') ||
    (init?.headers !== undefined && (init.headers instanceof Headers || Array.isArray(init.headers)))
  )
    return fetch(input, init);
  const answer = await httpRequest(input, {
    method: init?.method ?? 'GET',
    headers: init?.headers as Record<string, string> | undefined,
    ...(typeof body === 'string' ? { body } : {}),
    ...(init?.signal ? { signal: init.signal } : {}),
    redirect,
  });
  const bytes = async () => (await answer.body).bytes;
  const response = {
    url: answer.url,
    status: answer.status,
    statusText: answer.statusText,
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
