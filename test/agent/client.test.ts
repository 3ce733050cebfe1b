import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  clipDetail,
  MAX_ERROR_BODY_BYTES,
  MAX_RESPONSE_BYTES,
  MAX_RETRY_AFTER_MS,
  parseRetryAfter,
} from '../../src/agent/attempt-failures.js';
import {
  type AgentClient,
  type AgentClientOptions,
  agentsPerProject,
  createAgentClient,
} from '../../src/agent/client.js';
import {
  AgentApiError,
  AgentBadRequestError,
  AgentInvalidResponseError,
  AgentNotFoundError,
  AgentOutcomeUnknownError,
  AgentRateLimitedError,
  AgentResponseTooLargeError,
  AgentUnauthorizedError,
  AgentUnavailableError,
  getPolicy,
  postPolicy,
} from '../../src/agent/errors.js';
import { createLogger, createRedactor } from '../../src/logging/logger.js';
import {
  type AgentOperation,
  type AgentStandIn,
  API_KEY,
  PROJECT_ID,
  startAgentStandIn,
} from '../helpers/agent-stand-in.js';
import { listen, sleep, waitFor } from '../helpers/http.js';

const WRONG_KEY = 'mint_wrong_key_0123456789';
/** A fixed clock for tests that check computed reset times exactly. */
const NOW = Date.parse('2026-09-01T12:00:00.000Z');

// Same retry decisions as production, with delays short enough for tests.
const fastPolicies = {
  get: { ...getPolicy, minTimeoutMs: 5, maxTimeoutMs: 20 },
  post: { ...postPolicy, minTimeoutMs: 5, maxTimeoutMs: 20 },
};

let stand: AgentStandIn;
let lines: string[];
let answers: number[];
let errors: Error[];

beforeEach(async () => {
  stand = await startAgentStandIn();
  lines = [];
  answers = [];
  errors = [];
});

afterEach(async () => {
  await stand.close();
  expect(stand.violations).toEqual([]);
  // The key is a server-side secret: no error the client threw and no line it logged may carry it.
  const texts = [...lines, ...errors.flatMap(errorTexts)];
  for (const key of [API_KEY, WRONG_KEY]) {
    expect(texts.filter((t) => t.includes(key))).toEqual([]);
  }
});

/** Every text an error exposes: message, string form, own fields, and the same for its causes. */
function errorTexts(error: unknown): string[] {
  const out: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current instanceof Error; depth++) {
    out.push(current.message, String(current), JSON.stringify({ ...current }));
    current = current.cause;
  }
  return out;
}

function client(overrides: Partial<AgentClientOptions> = {}) {
  return createAgentClient({
    baseUrl: stand.url,
    apiKey: API_KEY,
    projectId: PROJECT_ID,
    timeoutMs: 2_000,
    logger: createLogger({ level: 'debug', secrets: [API_KEY], write: (line) => lines.push(line) }),
    redact: createRedactor([API_KEY]),
    policies: fastPolicies,
    onAnswer: (status) => answers.push(status),
    ...overrides,
  });
}

/** Awaits a promise that must reject and returns the error (and records it for the key check). */
async function failure(promise: Promise<unknown>): Promise<Error> {
  let value: unknown;
  try {
    value = await promise;
  } catch (error) {
    errors.push(error as Error);
    return error as Error;
  }
  throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
}

/** Debug lines the client writes before each retry. */
const retryLines = () =>
  lines
    .map((line) => JSON.parse(line) as { msg: string; retriesLeft?: number })
    .filter((l) => l.msg === 'agent API request will be retried');

/** A pass-through proxy in front of the stand-in that records every request, whatever its answer. */
async function countingProxy(target: string) {
  const seen: { method: string; path: string; authorization: string | undefined; status: number }[] = [];
  const proxy = await listen(async (req, body, res) => {
    const upstream = await fetch(`${target}${req.url}`, {
      method: req.method ?? 'GET',
      headers: {
        ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
        ...(req.headers['content-type'] ? { 'content-type': String(req.headers['content-type']) } : {}),
      },
      body: req.method === 'GET' ? undefined : body,
    });
    const text = await upstream.text();
    seen.push({
      method: req.method ?? '',
      path: req.url ?? '',
      authorization: req.headers.authorization,
      status: upstream.status,
    });
    res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'text/plain' });
    res.end(text);
  });
  return { url: proxy.url, seen, close: proxy.close };
}

/** The URL of a port nothing listens on any more. */
async function closedPortUrl(): Promise<string> {
  const server = await listen((_req, _body, res) => {
    res.end();
  });
  await server.close();
  return server.url;
}

/** Runs a POST operation of the client: create, or a follow-up to an existing job. */
async function post(op: 'create' | 'message', c = client()) {
  return op === 'create' ? c.createJob('Document the CLI') : c.sendMessage('job_1', 'Also the SDK');
}

/** Prepares a job for follow-up tests, created directly through the stand-in's API. */
async function seedJob() {
  const job = await client().createJob('Seed job');
  expect(job.id).toBe('job_1');
  answers.length = 0;
}

describe('successful operations', () => {
  it('creates a job (201), sends a follow-up (200) and reads it back (200), parsed', async () => {
    const c = client();
    const created = await c.createJob('Add a quickstart for the Python SDK');
    const stored = stand.jobs.get('job_1');
    expect(created).toEqual({
      id: 'job_1',
      status: 'active',
      source: { repository: 'https://github.com/example/docs', ref: 'docs-agent/job-1' },
      model: 'sonnet',
      prLink: null,
      createdAt: stored?.createdAt,
      archivedAt: null,
    });
    expect(stand.requestsFor('create')).toMatchObject([
      { body: { prompt: 'Add a quickstart for the Python SDK' } },
    ]);

    stand.complete('job_1', 'https://github.com/example/docs/pull/1');
    const followed = await c.sendMessage('job_1', 'Also cover async clients');
    // A follow-up starts the job again.
    expect(followed).toMatchObject({ id: 'job_1', status: 'active' });
    expect(stand.requestsFor('message')).toMatchObject([
      { jobId: 'job_1', body: { prompt: 'Also cover async clients' } },
    ]);
    expect(stored?.prompts).toEqual(['Add a quickstart for the Python SDK', 'Also cover async clients']);

    stand.complete('job_1', 'https://github.com/example/docs/pull/2');
    const read = await c.getJob('job_1');
    expect(read).toMatchObject({
      id: 'job_1',
      status: 'completed',
      prLink: 'https://github.com/example/docs/pull/2',
    });
    expect(stand.requestsFor('get')).toHaveLength(1);
    expect(answers).toEqual([201, 200, 200]);
    expect(errors).toEqual([]);
  });

  it('sends the key as a bearer token, JSON bodies, and encodes job ids in the path', async () => {
    const proxy = await countingProxy(stand.url);
    try {
      const c = client({ baseUrl: `${proxy.url}/` });
      await c.createJob('Hello');
      const error = await failure(c.getJob('job 1/../x'));
      expect(error).toBeInstanceOf(AgentNotFoundError);
      expect(proxy.seen).toEqual([
        {
          method: 'POST',
          path: `/v2/agent/${PROJECT_ID}/job`,
          authorization: `Bearer ${API_KEY}`,
          status: 201,
        },
        {
          method: 'GET',
          path: `/v2/agent/${PROJECT_ID}/job/job%201%2F..%2Fx`,
          authorization: `Bearer ${API_KEY}`,
          status: 404,
        },
      ]);
      expect(stand.requestsFor('get')).toMatchObject([{ jobId: 'job 1/../x' }]);
    } finally {
      await proxy.close();
    }
  });
});

describe('authorization', () => {
  it.each<[AgentOperation, (c: ReturnType<typeof client>) => Promise<unknown>]>([
    ['create', (c) => c.createJob('Hello')],
    ['message', (c) => c.sendMessage('job_1', 'Hello again')],
    ['get', (c) => c.getJob('job_1')],
  ])('%s with a wrong key gives AgentUnauthorizedError after exactly one request', async (_op, call) => {
    await seedJob();
    const requestsBefore = stand.requests.length;
    const proxy = await countingProxy(stand.url);
    try {
      const error = await failure(call(client({ baseUrl: proxy.url, apiKey: WRONG_KEY })));
      expect(error).toBeInstanceOf(AgentUnauthorizedError);
      expect((error as AgentUnauthorizedError).status).toBe(401);
      expect(error.message).toContain('Invalid API key');
      expect(proxy.seen).toHaveLength(1);
      expect(proxy.seen[0]).toMatchObject({ authorization: `Bearer ${WRONG_KEY}`, status: 401 });
      expect(answers).toEqual([401]);
      expect(retryLines()).toEqual([]);
      // The stand-in refused it before doing anything.
      expect(stand.requests).toHaveLength(requestsBefore);
    } finally {
      await proxy.close();
    }
  });

  it('403 (IP allow-list, missing scope) is AgentUnauthorizedError and not retried', async () => {
    await seedJob();
    stand.fail('get', { status: 403, body: JSON.stringify({ error: 'IP address not allowed' }) });
    const error = await failure(client().getJob('job_1'));
    expect(error).toBeInstanceOf(AgentUnauthorizedError);
    expect((error as AgentUnauthorizedError).status).toBe(403);
    expect(error.message).toContain('IP address not allowed');
    expect(stand.requestsFor('get')).toHaveLength(1);
  });
});

describe('GET retries', () => {
  it('retries a burst of 500, 502, 503 and then returns the job', async () => {
    await seedJob();
    stand.fail('get', { status: 500 }, { status: 502 }, { status: 503 });
    const job = await client().getJob('job_1');
    expect(job).toMatchObject({ id: 'job_1', status: 'active' });
    expect(stand.requestsFor('get')).toHaveLength(4);
    expect(answers).toEqual([500, 502, 503, 200]);
    expect(retryLines().map((l) => l.retriesLeft)).toEqual([3, 2, 1]);
    expect(errors).toEqual([]);
  });

  it('retries when the connection is closed without an answer', async () => {
    await seedJob();
    stand.fail('get', { hangUp: true }, { hangUp: true });
    const job = await client().getJob('job_1');
    expect(job.id).toBe('job_1');
    expect(stand.requestsFor('get')).toHaveLength(3);
    expect(answers).toEqual([200]);
  });

  it('gives up after its retries with AgentUnavailableError', async () => {
    await seedJob();
    stand.fail('get', { status: 500 }, { status: 502 }, { status: 504 }, { status: 500 }, { status: 500 });
    const error = await failure(client().getJob('job_1'));
    expect(error).toBeInstanceOf(AgentUnavailableError);
    expect((error as AgentUnavailableError).status).toBe(500);
    // 1 attempt + getPolicy.retries (3); the fifth queued fault is never reached.
    expect(stand.requestsFor('get')).toHaveLength(1 + getPolicy.retries);
    expect(stand.requestsFor('get')).toHaveLength(4);
  });

  it('retries a 429 with Retry-After: 0', async () => {
    await seedJob();
    stand.fail('get', { status: 429, headers: { 'retry-after': '0' } });
    const job = await client().getJob('job_1');
    expect(job.id).toBe('job_1');
    expect(stand.requestsFor('get')).toHaveLength(2);
    expect(answers).toEqual([429, 200]);
  });

  it('does not wait out a long 429 in place: AgentRateLimitedError with the reset time', async () => {
    await seedJob();
    stand.fail('get', { status: 429, headers: { 'retry-after': '3600' } });
    const error = await failure(client({ now: () => NOW }).getJob('job_1'));
    expect(error).toBeInstanceOf(AgentRateLimitedError);
    expect((error as AgentRateLimitedError).resetAt?.toISOString()).toBe('2026-09-01T13:00:00.000Z');
    expect(stand.requestsFor('get')).toHaveLength(1);
  });

  it('waits out a short Retry-After before retrying', async () => {
    await seedJob();
    stand.fail('get', { status: 429, headers: { 'retry-after': '1' } });
    const job = await client().getJob('job_1');
    expect(job.id).toBe('job_1');
    const [first, second] = stand.requestsFor('get');
    expect(stand.requestsFor('get')).toHaveLength(2);
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(1_000);
  });

  it('404 is AgentNotFoundError with the server message, not retried', async () => {
    const error = await failure(client().getJob('job_404'));
    expect(error).toBeInstanceOf(AgentNotFoundError);
    expect((error as AgentNotFoundError).status).toBe(404);
    expect(error.message).toContain('Job not found');
    expect(stand.requestsFor('get')).toEqual([expect.objectContaining({ jobId: 'job_404' })]);
    expect(answers).toEqual([404]);
  });

  it('retries a time-out', async () => {
    await seedJob();
    stand.fail('get', { delayMs: 800 });
    const job = await client({ timeoutMs: 150 }).getJob('job_1');
    expect(job.id).toBe('job_1');
    expect(stand.requestsFor('get')).toHaveLength(2);
    expect(answers).toEqual([200]);
  });

  it('retries a refused connection, then gives up with AgentUnavailableError', async () => {
    const error = await failure(client({ baseUrl: await closedPortUrl() }).getJob('job_1'));
    expect(error).toBeInstanceOf(AgentUnavailableError);
    expect(error.message).toContain('ECONNREFUSED');
    expect(retryLines().map((l) => l.retriesLeft)).toEqual([3, 2, 1]);
    expect(answers).toEqual([]);
  });
});

describe('POST: never repeated once it may have taken effect', () => {
  it.each(['create', 'message'] as const)(
    '%s: 500 is AgentOutcomeUnknownError after exactly one request',
    async (op) => {
      if (op === 'message') await seedJob();
      stand.fail(op, { status: 500 });
      const error = await failure(post(op));
      expect(error).toBeInstanceOf(AgentOutcomeUnknownError);
      expect((error as AgentOutcomeUnknownError).status).toBe(500);
      expect(stand.requestsFor(op)).toHaveLength(1);
      expect(answers).toEqual([500]);
      expect(retryLines()).toEqual([]);
    },
  );

  it.each([502, 504])('create: %i is AgentOutcomeUnknownError after exactly one request', async (status) => {
    stand.fail('create', { status });
    const error = await failure(post('create'));
    expect(error).toBeInstanceOf(AgentOutcomeUnknownError);
    expect(stand.requestsFor('create')).toHaveLength(1);
  });

  it.each(['create', 'message'] as const)(
    '%s: a hang-up after the work was done is AgentOutcomeUnknownError, one request',
    async (op) => {
      if (op === 'message') await seedJob();
      stand.fail(op, { acceptThenHangUp: true });
      const error = await failure(post(op));
      expect(error).toBeInstanceOf(AgentOutcomeUnknownError);
      expect(stand.requestsFor(op)).toHaveLength(1);
      if (op === 'create') {
        // The agent was started: a retry would have started a second one.
        expect([...stand.jobs.keys()]).toEqual(['job_1']);
      } else {
        expect(stand.jobs.get('job_1')?.prompts).toEqual(['Seed job', 'Also the SDK']);
      }
    },
  );

  it.each(['create', 'message'] as const)(
    '%s: a time-out is AgentOutcomeUnknownError, one request',
    async (op) => {
      if (op === 'message') await seedJob();
      stand.fail(op, { delayMs: 800 });
      const attempts: string[] = [];
      const timingOut = client({
        timeoutMs: 150,
        onRequest: (_endpoint, answer) => attempts.push(String(answer)),
      });
      const error = await failure(post(op, timingOut));
      expect(error).toBeInstanceOf(AgentOutcomeUnknownError);
      expect(error.message).toContain('150 ms');
      expect(stand.requestsFor(op)).toHaveLength(1);
      // Nothing is sent later either: the one attempt ended, and no retry was ever decided on
      // (the client logs that decision before it waits to retry).
      expect(attempts).toEqual(['timeout']);
      expect(retryLines()).toEqual([]);
    },
  );

  it.each(['create', 'message'] as const)('%s: 503 is retried and then succeeds', async (op) => {
    if (op === 'message') await seedJob();
    stand.fail(op, { status: 503 });
    const job = await post(op);
    expect(job.id).toBe('job_1');
    expect(stand.requestsFor(op)).toHaveLength(2);
    expect(answers).toEqual([503, op === 'create' ? 201 : 200]);
    if (op === 'create') expect([...stand.jobs.keys()]).toEqual(['job_1']);
  });

  it('create: 503 every time gives AgentUnavailableError after the POST retries', async () => {
    stand.fail('create', { status: 503 }, { status: 503 }, { status: 503 }, { status: 503 });
    const error = await failure(post('create'));
    expect(error).toBeInstanceOf(AgentUnavailableError);
    expect(error).not.toBeInstanceOf(AgentOutcomeUnknownError);
    expect(stand.requestsFor('create')).toHaveLength(1 + postPolicy.retries);
    expect(stand.requestsFor('create')).toHaveLength(3);
  });

  it('create: 429 with Retry-After: 3600 is AgentRateLimitedError an hour ahead, one request', async () => {
    stand.fail('create', {
      status: 429,
      body: JSON.stringify({ error: 'Rate limit exceeded' }),
      headers: { 'retry-after': '3600' },
    });
    const error = await failure(post('create', client({ now: () => NOW })));
    expect(error).toBeInstanceOf(AgentRateLimitedError);
    expect((error as AgentRateLimitedError).status).toBe(429);
    expect((error as AgentRateLimitedError).resetAt?.toISOString()).toBe('2026-09-01T13:00:00.000Z');
    expect(error.message).toContain('Rate limit exceeded');
    expect(stand.requestsFor('create')).toHaveLength(1);
  });

  it('create: 429 with Retry-After: 3600 against the real clock resets about an hour ahead', async () => {
    stand.fail('create', { status: 429, headers: { 'retry-after': '3600' } });
    const before = Date.now();
    const error = await failure(post('create'));
    const resetAt = (error as AgentRateLimitedError).resetAt?.getTime() ?? 0;
    expect(resetAt).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(resetAt).toBeLessThanOrEqual(Date.now() + 3_600_000);
  });

  it('create: 429 with a plain-text body and no Retry-After is AgentRateLimitedError, not retried', async () => {
    stand.fail('create', {
      status: 429,
      body: 'Too Many Requests\n',
      headers: { 'content-type': 'text/plain' },
    });
    const error = await failure(post('create'));
    expect(error).toBeInstanceOf(AgentRateLimitedError);
    expect((error as AgentRateLimitedError).resetAt).toBeUndefined();
    expect(error.message).toContain('Too Many Requests');
    expect(stand.requestsFor('create')).toHaveLength(1);
    expect(stand.jobs.size).toBe(0);
  });

  it('message: 429 with Retry-After: 0 is retried', async () => {
    await seedJob();
    stand.fail('message', { status: 429, headers: { 'retry-after': '0' } });
    const job = await post('message');
    expect(job.id).toBe('job_1');
    expect(stand.requestsFor('message')).toHaveLength(2);
    expect(answers).toEqual([429, 200]);
  });

  it('create: 429 with Retry-After: 0 is retried', async () => {
    stand.fail('create', { status: 429, headers: { 'retry-after': '0' } });
    const job = await post('create');
    expect(job.id).toBe('job_1');
    expect(stand.requestsFor('create')).toHaveLength(2);
    expect(stand.jobs.size).toBe(1);
  });

  it('create: a refused connection is retried, then AgentUnavailableError (not OutcomeUnknown)', async () => {
    const error = await failure(post('create', client({ baseUrl: await closedPortUrl() })));
    expect(error).toBeInstanceOf(AgentUnavailableError);
    expect(error).not.toBeInstanceOf(AgentOutcomeUnknownError);
    expect(error.message).toContain('ECONNREFUSED');
    // 1 attempt + postPolicy.retries (2): a debug line before each retry.
    expect(retryLines().map((l) => l.retriesLeft)).toEqual([2, 1]);
    expect(answers).toEqual([]);
  });

  it('create: 400 with {"error"} is AgentBadRequestError carrying the server message', async () => {
    stand.fail('create', {
      status: 400,
      body: JSON.stringify({ error: 'prompt exceeds the maximum length' }),
    });
    const error = await failure(post('create'));
    expect(error).toBeInstanceOf(AgentBadRequestError);
    expect((error as AgentBadRequestError).detail).toBe('prompt exceeds the maximum length');
    expect((error as AgentBadRequestError).status).toBe(400);
    expect(stand.requestsFor('create')).toHaveLength(1);
  });

  it('create: an empty prompt is refused by the documented schema: AgentBadRequestError, one answer', async () => {
    const error = await failure(client().createJob(''));
    expect(error).toBeInstanceOf(AgentBadRequestError);
    expect((error as AgentBadRequestError).detail).toMatch(/^Invalid request: /);
    expect(answers).toEqual([400]);
    expect(stand.jobs.size).toBe(0);
  });
});

describe('responses', () => {
  it('malformed JSON on a 200 is AgentInvalidResponseError, not retried', async () => {
    await seedJob();
    stand.fail('get', { status: 200, body: '{"id": "job_1", "status": ' });
    const error = await failure(client().getJob('job_1'));
    expect(error).toBeInstanceOf(AgentInvalidResponseError);
    expect((error as AgentInvalidResponseError).status).toBe(200);
    expect(stand.requestsFor('get')).toHaveLength(1);
  });

  it('JSON that is not a job on a 201 is AgentInvalidResponseError', async () => {
    stand.fail('create', { status: 201, body: JSON.stringify({ ok: true }) });
    const error = await failure(post('create'));
    expect(error).toBeInstanceOf(AgentInvalidResponseError);
    expect(error.message).toContain('not an agent job');
    expect(stand.requestsFor('create')).toHaveLength(1);
  });

  it('a job with an unknown status and extra fields parses: status kept, extra fields dropped', async () => {
    await seedJob();
    stand.setStatus('job_1', 'paused', { queuePosition: 3, internal: { shard: 'eu-1' } });
    const job = await client().getJob('job_1');
    expect(job).toEqual({
      id: 'job_1',
      status: 'paused',
      source: { repository: 'https://github.com/example/docs', ref: 'docs-agent/job-1' },
      model: 'sonnet',
      prLink: null,
      createdAt: stand.jobs.get('job_1')?.createdAt,
      archivedAt: null,
    });
    expect(Object.keys(job)).not.toContain('queuePosition');
  });

  it('prLink: null while active and for a completed job without changes, the URL once there is a PR', async () => {
    const c = client();
    expect((await c.createJob('Fix typos')).prLink).toBeNull();
    stand.complete('job_1', null);
    expect(await c.getJob('job_1')).toMatchObject({ status: 'completed', prLink: null });
    stand.complete('job_1', 'https://github.com/example/docs/pull/9');
    expect(await c.getJob('job_1')).toMatchObject({
      status: 'completed',
      prLink: 'https://github.com/example/docs/pull/9',
    });
  });

  it('an archived job carries its archivedAt', async () => {
    await seedJob();
    stand.setStatus('job_1', 'archived');
    const job = await client().getJob('job_1');
    expect(job.status).toBe('archived');
    expect(job.archivedAt).toBe(stand.jobs.get('job_1')?.archivedAt);
    expect(job.archivedAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);
  });
});

describe('bounded answers', () => {
  const MB = 1_048_576;

  it('cuts a 100 MB answer at 1 MiB as it streams in: the request is aborted, nothing more is read', async () => {
    await seedJob();
    // Paced, so what the stand-in got out is what the client took, not what kernel buffers hold.
    stand.fail('get', { flood: { bytes: 100 * MB, chunkBytes: 16_384, paceMs: 1 } });
    const heapBefore = process.memoryUsage().heapUsed;
    const error = await failure(client().getJob('job_1'));
    expect(error).toBeInstanceOf(AgentResponseTooLargeError);
    // Handled exactly like a malformed answer.
    expect(error).toBeInstanceOf(AgentInvalidResponseError);
    expect((error as AgentResponseTooLargeError).status).toBe(200);
    expect((error as AgentResponseTooLargeError).limitBytes).toBe(MAX_RESPONSE_BYTES);
    expect(error.message).toContain(`over ${MAX_RESPONSE_BYTES} bytes`);
    expect(MAX_RESPONSE_BYTES).toBe(MB);
    const [flood] = stand.floods;
    await waitFor('the stand-in to see the hang-up', () => flood?.cutOff);
    expect(flood?.finished).toBe(false);
    expect(flood?.written).toBeGreaterThan(MB);
    expect(flood?.written).toBeLessThan(2 * MB);
    // Not the body's size: at most the 1 MiB kept (as bytes and as a string) and some slack.
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(20 * MB);
    // Like a malformed answer, it is not retried in place (the poller tries again later).
    expect(stand.requestsFor('get')).toHaveLength(1);
    expect(answers).toEqual([200]);
  });

  it('cuts an unpaced flood too, long before its end', async () => {
    await seedJob();
    stand.fail('get', { flood: { bytes: 100 * MB, chunkBytes: 65_536 } });
    const started = Date.now();
    const error = await failure(client().getJob('job_1'));
    expect(error).toBeInstanceOf(AgentResponseTooLargeError);
    const [flood] = stand.floods;
    await waitFor('the stand-in to see the hang-up', () => flood?.cutOff);
    // Socket buffers on both sides hold a few MB at most; the client itself read 1 MiB.
    expect(flood?.written).toBeLessThan(16 * MB);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('refuses an answer whose Content-Length is over the limit without reading it', async () => {
    await seedJob();
    // The stand-in announces 100 MB and then trickles: the client must not wait for any of it.
    stand.fail('get', { flood: { bytes: 100 * MB, declareLength: true, chunkBytes: 1_024, paceMs: 50 } });
    const started = Date.now();
    const error = await failure(client().getJob('job_1'));
    expect(error).toBeInstanceOf(AgentResponseTooLargeError);
    expect(Date.now() - started).toBeLessThan(1_000);
    const [flood] = stand.floods;
    await waitFor('the stand-in to see the hang-up', () => flood?.cutOff);
    expect(flood?.written).toBeLessThan(64 * 1_024);
  });

  it('reads an answer of exactly 1 MiB (an overlong field in it is dropped, the job kept)', async () => {
    await seedJob();
    const prefix = '{"id": "job_1", "status": "active", "model": "';
    const suffix = '"}';
    const body = `${prefix}${'m'.repeat(MAX_RESPONSE_BYTES - prefix.length - suffix.length)}${suffix}`;
    expect(Buffer.byteLength(body)).toBe(MAX_RESPONSE_BYTES);
    stand.fail('get', { status: 200, body });
    const job = await client().getJob('job_1');
    expect(job).toMatchObject({ id: 'job_1', status: 'active', model: null });
  });

  it.each(['create', 'message'] as const)(
    '%s: an overlong answer is an unknown outcome like a malformed one, one request',
    async (op) => {
      if (op === 'message') await seedJob();
      stand.fail(op, { flood: { status: op === 'create' ? 201 : 200, bytes: 10 * MB } });
      const error = await failure(post(op));
      expect(error).toBeInstanceOf(AgentResponseTooLargeError);
      expect(error).toBeInstanceOf(AgentInvalidResponseError);
      expect(stand.requestsFor(op)).toHaveLength(1);
      expect(retryLines()).toEqual([]);
    },
  );

  it('reads at most 64 KiB of a huge error answer and shows at most 300 characters of it', async () => {
    await seedJob();
    stand.fail(
      'get',
      { flood: { status: 500, bytes: 50 * MB, prefix: '{"error": "', fill: 'x', paceMs: 1 } },
      { flood: { status: 500, bytes: 50 * MB, prefix: '{"error": "', fill: 'x', paceMs: 1 } },
    );
    const job = await client().getJob('job_1');
    // Still an ordinary 500: retried, and the third attempt succeeds.
    expect(job.id).toBe('job_1');
    expect(answers).toEqual([500, 500, 200]);
    expect(stand.floods).toHaveLength(2);
    for (const flood of stand.floods) {
      await waitFor('the stand-in to see the hang-up', () => flood.cutOff);
      expect(flood.written).toBeLessThan(MAX_ERROR_BODY_BYTES + 200_000);
    }
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThan(2_000);
  });

  it('cuts a long JSON error, and a long plain-text 429, to 300 characters on one line', async () => {
    stand.fail('create', { status: 400, body: JSON.stringify({ error: `Bad\n${'b'.repeat(5_000)}` }) });
    const bad = await failure(post('create'));
    expect(bad).toBeInstanceOf(AgentBadRequestError);
    expect((bad as AgentBadRequestError).detail.length).toBeLessThanOrEqual(300);
    expect((bad as AgentBadRequestError).detail).toMatch(/^Bad b+…$/);

    stand.fail('create', {
      status: 429,
      body: `Too Many Requests\n${'z'.repeat(200_000)}`,
      headers: { 'content-type': 'text/plain' },
    });
    const limited = await failure(post('create'));
    expect(limited).toBeInstanceOf(AgentRateLimitedError);
    expect(limited.message).toContain('Too Many Requests z');
    expect(limited.message.length).toBeLessThan(450);
  });

  it('masks the key before cutting, so no cut leaves part of it', async () => {
    // The key straddles the 300th character.
    const error = `${'e'.repeat(290)}${API_KEY} more`;
    stand.fail('create', { status: 400, body: JSON.stringify({ error }) });
    const bad = await failure(post('create'));
    expect((bad as AgentBadRequestError).detail).not.toContain('mint_');
    expect((bad as AgentBadRequestError).detail).toContain('[red');
  });

  it('clipDetail keeps one line and never splits a surrogate pair', () => {
    expect(clipDetail('a\n\tb\u0000c')).toBe('a b c');
    expect(clipDetail('x'.repeat(10), 5)).toBe('xxxx…');
    const clipped = clipDetail(`abc${'😀'.repeat(5)}`, 5);
    expect(clipped).toBe('abc…');
  });
});

describe('job ids in request paths', () => {
  it.each(['..', '.', 'job\u0000x', 'job\nx', 'j'.repeat(257)])(
    'refuses %j before any request is sent',
    async (id) => {
      const c = client();
      const get = await failure(c.getJob(id));
      const message = await failure(c.sendMessage(id, 'hello'));
      for (const error of [get, message]) {
        expect(error).toBeInstanceOf(AgentApiError);
        expect(error).not.toBeInstanceOf(AgentOutcomeUnknownError);
        expect(error.message).toContain('cannot be used in a request path');
      }
      expect(stand.requests).toEqual([]);
    },
  );

  it('refuses an answer whose job id could not be used in a path', async () => {
    stand.fail('create', { status: 201, body: JSON.stringify({ id: '..', status: 'active' }) });
    const error = await failure(post('create'));
    expect(error).toBeInstanceOf(AgentInvalidResponseError);
    expect(error.message).toContain('not an agent job');
  });
});

describe('the API key stays secret', () => {
  it('appears in no error and no log line across failures', async () => {
    const c = client();
    const seen: Error[] = [];
    stand.fail('get', { status: 500 }, { hangUp: true }, { status: 503 }, { status: 502 });
    seen.push(await failure(c.getJob('job_1')));
    stand.fail('create', { status: 500 });
    seen.push(await failure(c.createJob('x')));
    stand.fail('create', { acceptThenHangUp: true });
    seen.push(await failure(c.createJob('x')));
    stand.fail('create', { status: 429, body: 'slow down' });
    seen.push(await failure(c.createJob('x')));
    seen.push(await failure(client({ apiKey: WRONG_KEY }).getJob('job_1')));
    seen.push(await failure(client({ baseUrl: await closedPortUrl() }).createJob('x')));
    seen.push(await failure(c.getJob('job_missing')));
    expect(seen.map((e) => e.constructor)).toEqual([
      AgentUnavailableError,
      AgentOutcomeUnknownError,
      AgentOutcomeUnknownError,
      AgentRateLimitedError,
      AgentUnauthorizedError,
      AgentUnavailableError,
      AgentNotFoundError,
    ]);
    // The retries above were logged, so the check below looks at real lines.
    expect(retryLines().length).toBeGreaterThanOrEqual(5);
    const texts = [...lines, ...seen.flatMap(errorTexts)];
    expect(texts.filter((t) => t.includes(API_KEY) || t.includes(WRONG_KEY))).toEqual([]);
  });

  it.each([
    ['create', 401, AgentUnauthorizedError],
    ['create', 400, AgentBadRequestError],
    ['create', 429, AgentRateLimitedError],
    ['create', 500, AgentOutcomeUnknownError],
    ['get', 404, AgentNotFoundError],
  ] as const)('%s %i: a key echoed back in the error body is masked', async (op, status, type) => {
    // Proxies and some APIs echo the offending credential ("invalid key mint_..."): the message
    // built from the body must not carry it to a log or a Slack message.
    if (op === 'get') await seedJob();
    stand.fail(op, { status, body: JSON.stringify({ error: `Invalid API key: ${API_KEY}` }) });
    const c = client();
    const error = await failure(op === 'get' ? c.getJob('job_1') : c.createJob('x'));
    expect(error).toBeInstanceOf(type);
    expect(error.message).toContain('Invalid API key: [redacted]');
    expect(error.message).not.toContain(API_KEY);
    if (error instanceof AgentBadRequestError) expect(error.detail).toBe('Invalid API key: [redacted]');
  });
});

describe('Retry-After on a 5xx', () => {
  // The policies document a ceiling on how long a request waits in place (GET 10 s, POST 5 s);
  // a 503 asking for an hour must go back to the caller, not hold the request for an hour.
  it.each(['get', 'create'] as const)(
    '%s: 503 with Retry-After: 3600 fails promptly with AgentUnavailableError',
    async (op) => {
      if (op === 'get') await seedJob();
      stand.fail(op, { status: 503, headers: { 'retry-after': '3600' } });
      const c = client();
      const call = op === 'get' ? c.getJob('job_1') : c.createJob('x');
      const outcome = await Promise.race([
        call.then(
          () => 'resolved',
          (error: unknown) => {
            errors.push(error as Error);
            return error;
          },
        ),
        sleep(2_000).then(() => 'still waiting after 2 s'),
      ]);
      expect(outcome).toBeInstanceOf(AgentUnavailableError);
      expect(stand.requestsFor(op)).toHaveLength(1);
    },
  );
});

describe('parseRetryAfter', () => {
  const headers = (init: Record<string, string>) => new Headers(init);

  it('reads delta seconds', () => {
    expect(parseRetryAfter(headers({ 'retry-after': '120' }), NOW)).toBe(120_000);
    expect(parseRetryAfter(headers({ 'retry-after': '0' }), NOW)).toBe(0);
    expect(parseRetryAfter(headers({ 'retry-after': '1.5' }), NOW)).toBe(1_500);
  });

  it('reads an HTTP date relative to now, never negative', () => {
    const now = Date.parse('Wed, 21 Oct 2026 07:28:00 GMT');
    expect(parseRetryAfter(headers({ 'retry-after': 'Wed, 21 Oct 2026 07:30:00 GMT' }), now)).toBe(120_000);
    expect(parseRetryAfter(headers({ 'retry-after': 'Wed, 21 Oct 2026 07:00:00 GMT' }), now)).toBe(0);
  });

  it('reads x-ratelimit-reset as epoch seconds, or as a delta when small', () => {
    const now = 1_790_000_000_000;
    expect(parseRetryAfter(headers({ 'x-ratelimit-reset': '1790000060' }), now)).toBe(60_000);
    expect(parseRetryAfter(headers({ 'x-ratelimit-reset': '1789999000' }), now)).toBe(0);
    expect(parseRetryAfter(headers({ 'x-ratelimit-reset': '30' }), now)).toBe(30_000);
    expect(parseRetryAfter(headers({ 'ratelimit-reset': '5' }), now)).toBe(5_000);
  });

  it('caps an absurd wait at a day, so the time said to a person is a real one', () => {
    for (const value of ['99999999999999999', '1e400', '9'.repeat(400)]) {
      const ms = parseRetryAfter(headers({ 'retry-after': value }), NOW);
      expect(ms === undefined || ms <= MAX_RETRY_AFTER_MS).toBe(true);
    }
    expect(parseRetryAfter(headers({ 'retry-after': '99999999999999999' }), NOW)).toBe(MAX_RETRY_AFTER_MS);
    expect(parseRetryAfter(headers({ 'x-ratelimit-reset': '1e308' }), NOW)).toBe(MAX_RETRY_AFTER_MS);
  });

  it('prefers Retry-After over a reset header', () => {
    expect(
      parseRetryAfter(headers({ 'retry-after': '2', 'x-ratelimit-reset': String(NOW / 1000 + 600) }), NOW),
    ).toBe(2_000);
  });

  it('is undefined when nothing usable was sent', () => {
    expect(parseRetryAfter(headers({}), NOW)).toBeUndefined();
    expect(parseRetryAfter(headers({ 'retry-after': 'soon' }), NOW)).toBeUndefined();
    expect(parseRetryAfter(headers({ 'x-ratelimit-reset': 'later' }), NOW)).toBeUndefined();
  });

  it('treats a negative Retry-After as invalid, not as "retry now"', () => {
    // Number('-5') is rejected, but Date.parse('-5') is a date in 2001 (V8), which becomes 0.
    expect(parseRetryAfter(headers({ 'retry-after': '-5' }), NOW)).toBeUndefined();
  });

  it('uses the reset time in a rate-limit error raised by the client', async () => {
    stand.fail('create', { status: 429, headers: { 'x-ratelimit-reset': String(NOW / 1000 + 1800) } });
    const error = await failure(client({ now: () => NOW }).createJob('x'));
    expect((error as AgentRateLimitedError).resetAt?.toISOString()).toBe('2026-09-01T12:30:00.000Z');
    expect(stand.requestsFor('create')).toHaveLength(1);
  });
});

describe('error classes', () => {
  it('set their names and share AgentApiError', () => {
    const error = new AgentOutcomeUnknownError('x', { status: 500 });
    expect(error).toBeInstanceOf(AgentApiError);
    expect(error.name).toBe('AgentOutcomeUnknownError');
    expect(new AgentBadRequestError('bad').message).toBe('agent API rejected the request: bad');
  });
});

describe('redirects', () => {
  it('are never followed: the prompt goes nowhere but the configured API', async () => {
    const elsewhere: string[] = [];
    const other = await listen((req, body, res) => {
      elsewhere.push(`${req.method} ${req.url} ${body}`);
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end('{}');
    });
    const redirecting = await listen((req, _body, res) => {
      res.writeHead(307, { location: `${other.url}${req.url}` });
      res.end();
    });
    try {
      const error = await failure(
        client({ baseUrl: redirecting.url }).createJob('Document the secret roadmap'),
      );
      expect(error).toBeInstanceOf(AgentOutcomeUnknownError);
      const get = await failure(client({ baseUrl: redirecting.url }).getJob('job_1'));
      expect(get).toBeInstanceOf(AgentUnavailableError);
      expect(elsewhere).toEqual([]);
    } finally {
      await other.close();
      await redirecting.close();
    }
  });
});

describe('agentsPerProject', () => {
  const OTHER_PROJECT = 'proj_handbook';

  // A stand-in serving two projects, beside the one every other test here uses.
  let projects: AgentStandIn;
  let wrapped: AgentClient[];

  beforeEach(async () => {
    projects = await startAgentStandIn({ projects: [PROJECT_ID, OTHER_PROJECT] });
    wrapped = [];
  });

  afterEach(async () => {
    await projects.close();
    expect(projects.violations).toEqual([]);
  });

  function agents() {
    return agentsPerProject({
      baseUrl: projects.url,
      apiKey: API_KEY,
      timeoutMs: 2_000,
      logger: createLogger({ level: 'error', secrets: [API_KEY], write: () => undefined }),
      redact: createRedactor([API_KEY]),
      policies: {
        get: { ...getPolicy, minTimeoutMs: 5, maxTimeoutMs: 20 },
        post: { ...postPolicy, minTimeoutMs: 5, maxTimeoutMs: 20 },
      },
      defaultProject: PROJECT_ID,
      wrap: (client) => {
        wrapped.push(client);
        return client;
      },
    });
  }

  it('makes one client per project, on first use, and hands the same one back after', () => {
    const agentFor = agents();
    expect(wrapped).toHaveLength(0);
    const first = agentFor(OTHER_PROJECT);
    expect(agentFor(OTHER_PROJECT)).toBe(first);
    expect(wrapped).toHaveLength(1);
    const other = agentFor(PROJECT_ID);
    expect(other).not.toBe(first);
    expect(wrapped).toHaveLength(2);
  });

  it("runs a job recorded without a project in the deployment's default, with that project's client", () => {
    const agentFor = agents();
    const unrecorded = agentFor(null);
    expect(agentFor(PROJECT_ID)).toBe(unrecorded);
    expect(wrapped).toHaveLength(1);
  });

  it('sends each client to its own project, with the shared key', async () => {
    const agentFor = agents();
    const inOther = await agentFor(OTHER_PROJECT).createJob('Document the handbook');
    const inDefault = await agentFor(null).createJob('Document the CLI');
    await agentFor(OTHER_PROJECT).getJob(inOther.id);
    expect(projects.requests.map((r) => [r.op, r.projectId])).toEqual([
      ['create', OTHER_PROJECT],
      ['create', PROJECT_ID],
      ['get', OTHER_PROJECT],
    ]);
    // A job lives in its project: the other project's client cannot reach it.
    await expect(agentFor(PROJECT_ID).getJob(inOther.id)).rejects.toThrow(/404/);
    expect(inDefault.id).not.toBe(inOther.id);
  });

  it('hands out what the wrapper returns, not the bare client', () => {
    const guarded: AgentClient = {
      createJob: async () => Promise.reject(new Error('held')),
      sendMessage: async () => Promise.reject(new Error('held')),
      getJob: async () => Promise.reject(new Error('held')),
    };
    const agentFor = agentsPerProject({
      baseUrl: projects.url,
      apiKey: API_KEY,
      timeoutMs: 1_000,
      logger: createLogger({ level: 'error', secrets: [API_KEY], write: () => undefined }),
      redact: createRedactor([API_KEY]),
      defaultProject: PROJECT_ID,
      wrap: () => guarded,
    });
    expect(agentFor('proj_any')).toBe(guarded);
  });
});
