import { describe, expect, it } from 'vitest';
import {
  AttemptFailure,
  CONNECT_ERROR_CODES,
  clipDetail,
  cutOffFailure,
  describeBody,
  errorCode,
  failureOfStatus,
  jobFromAnswer,
  MAX_ERROR_BODY_BYTES,
  MAX_RESPONSE_BYTES,
  MAX_RETRY_AFTER_MS,
  parseRetryAfter,
  unreachedFailure,
} from '../../src/agent/attempt-failures.js';
import {
  AgentBadRequestError,
  AgentInvalidResponseError,
  AgentNotFoundError,
  AgentOutcomeUnknownError,
  AgentRateLimitedError,
  AgentResponseTooLargeError,
  AgentUnauthorizedError,
  AgentUnavailableError,
} from '../../src/agent/errors.js';
import { MAX_ERROR_DETAIL_CHARS } from '../../src/agent/schema.js';
import { createRedactor } from '../../src/logging/logger.js';

const NOW = Date.parse('2026-09-01T12:00:00.000Z');
const WHERE = 'agent API POST /job answered 500';

/** A network error as fetch raises it: a TypeError whose cause carries the socket's code. */
const fetchFailed = (code?: string) =>
  new TypeError('fetch failed', { cause: Object.assign(new Error('socket'), code ? { code } : {}) });
const timedOut = () => new DOMException('The operation was aborted due to timeout', 'TimeoutError');

/** The failure a function threw, which must be an {@link AttemptFailure}. */
function thrown(run: () => unknown): AttemptFailure {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(AttemptFailure);
    return error as AttemptFailure;
  }
  throw new Error('expected the attempt to fail');
}

describe('unreachedFailure: a request that got no answer', () => {
  it('a time-out of a GET is an unavailable API, reported as a time-out, not surely without effect', () => {
    const { answer, failure } = unreachedFailure(timedOut(), 'GET', '/job/j1', 2_500);
    expect(answer).toBe('timeout');
    expect(failure.error).toBeInstanceOf(AgentUnavailableError);
    expect(failure.error.message).toBe('agent API GET /job/j1: no answer within 2500 ms');
    expect(failure.noEffect).toBe(false);
    expect(failure.retryAfterMs).toBeUndefined();
    expect(failure.message).toBe(failure.error.message);
  });

  it('a time-out of a POST leaves its outcome unknown: the agent may have started', () => {
    const error = timedOut();
    const { answer, failure } = unreachedFailure(error, 'POST', '/job', 2_500);
    expect(answer).toBe('timeout');
    expect(failure.error).toBeInstanceOf(AgentOutcomeUnknownError);
    expect(failure.error.cause).toBe(error);
    expect(failure.noEffect).toBe(false);
  });

  it('an aborted request counts as a time-out too', () => {
    const aborted = new DOMException('This operation was aborted', 'AbortError');
    expect(unreachedFailure(aborted, 'GET', '/job/j1', 100).answer).toBe('timeout');
  });

  it('a POST that never connected surely had no effect: unavailable, safe to send again', () => {
    for (const code of [
      'ECONNREFUSED',
      'ENOTFOUND',
      'EAI_AGAIN',
      'EHOSTUNREACH',
      'UND_ERR_CONNECT_TIMEOUT',
    ]) {
      const { answer, failure } = unreachedFailure(fetchFailed(code), 'POST', '/job', 1_000);
      expect(answer).toBe('network_error');
      expect(failure.error).toBeInstanceOf(AgentUnavailableError);
      expect(failure.error).not.toBeInstanceOf(AgentOutcomeUnknownError);
      expect(failure.error.message).toBe(`agent API POST /job: network error (${code})`);
      expect(failure.noEffect).toBe(true);
    }
  });

  it('a POST whose connection broke after it was sent has an unknown outcome', () => {
    const { failure } = unreachedFailure(fetchFailed('ECONNRESET'), 'POST', '/job/j1/message', 1_000);
    expect(failure.error).toBeInstanceOf(AgentOutcomeUnknownError);
    expect(failure.error.message).toBe('agent API POST /job/j1/message: network error (ECONNRESET)');
    expect(failure.noEffect).toBe(false);
  });

  it('a network error without a code is named unknown and never taken as harmless', () => {
    const post = unreachedFailure(fetchFailed(), 'POST', '/job', 1_000).failure;
    expect(post.error).toBeInstanceOf(AgentOutcomeUnknownError);
    expect(post.error.message).toBe('agent API POST /job: network error (unknown)');
    expect(post.noEffect).toBe(false);
    const get = unreachedFailure('not even an error', 'GET', '/job/j1', 1_000);
    expect(get.answer).toBe('network_error');
    expect(get.failure.error.cause).toBe('not even an error');
    expect(get.failure.error).toBeInstanceOf(AgentUnavailableError);
    expect(get.failure.noEffect).toBe(false);
  });
});

describe('cutOffFailure: an answer that broke off while it was read', () => {
  it('leaves a POST unknown and a GET unavailable, neither surely without effect', () => {
    const cause = new Error('terminated');
    const post = cutOffFailure(cause, 'POST', '/job');
    expect(post.error).toBeInstanceOf(AgentOutcomeUnknownError);
    expect(post.error.message).toBe('agent API POST /job: answer cut off');
    expect(post.error.cause).toBe(cause);
    expect(post.noEffect).toBe(false);
    const get = cutOffFailure(cause, 'GET', '/job/j1');
    expect(get.error).toBeInstanceOf(AgentUnavailableError);
    expect(get.error).not.toBeInstanceOf(AgentOutcomeUnknownError);
    expect(get.error.message).toBe('agent API GET /job/j1: answer cut off');
    expect(get.error.cause).toBe(cause);
    expect(get.noEffect).toBe(false);
    expect(get.retryAfterMs).toBeUndefined();
  });
});

describe('jobFromAnswer: the job a successful answer holds', () => {
  const mark = (text: string) => text.replaceAll('hunter2', '[masked]');
  const job = {
    id: 'job_hunter2',
    status: 'active hunter2',
    source: { repository: 'https://github.com/org/hunter2', ref: 'hunter2-branch' },
    model: 'model hunter2',
    prLink: 'https://github.com/org/repo/pull/1?hunter2',
    createdAt: '2026-09-01T12:00:00.000Z',
    archivedAt: null,
  };

  it('masks every field shown in Slack, and only the id (used only in request paths) is left as sent', () => {
    expect(jobFromAnswer(JSON.stringify(job), false, WHERE, 200, mark)).toEqual({
      id: 'job_hunter2',
      status: 'active [masked]',
      source: { repository: 'https://github.com/org/[masked]', ref: '[masked]-branch' },
      model: 'model [masked]',
      prLink: 'https://github.com/org/repo/pull/1?[masked]',
      createdAt: '2026-09-01T12:00:00.000Z',
      archivedAt: null,
    });
  });

  it('refuses a body that was cut at the limit, even if what was read parses', () => {
    const failure = thrown(() => jobFromAnswer(JSON.stringify(job), true, WHERE, 200, mark));
    expect(failure.error).toBeInstanceOf(AgentResponseTooLargeError);
    const error = failure.error as AgentResponseTooLargeError;
    expect(error.limitBytes).toBe(MAX_RESPONSE_BYTES);
    expect(error.status).toBe(200);
    expect(error.message).toBe(`${WHERE} with a body over 1048576 bytes; the rest was not read`);
    expect(failure.noEffect).toBe(false);
  });

  it('refuses a body that is not JSON, without putting the body in the message', () => {
    const failure = thrown(() => jobFromAnswer('<html>502 Bad Gateway</html>', false, WHERE, 201, mark));
    expect(failure.error).toBeInstanceOf(AgentInvalidResponseError);
    expect(failure.error).not.toBeInstanceOf(AgentResponseTooLargeError);
    expect(failure.error.message).toBe(`${WHERE} with a body that is not JSON`);
    expect(failure.error.status).toBe(201);
    expect(failure.noEffect).toBe(false);
  });

  it('refuses JSON that is not an agent job: no usable id, a list, a path segment as id', () => {
    for (const body of ['{"status":"active"}', '[]', 'null', '{"id":".."}', '{"id":"a\\nb"}', '"job_1"']) {
      const failure = thrown(() => jobFromAnswer(body, false, WHERE, 200, mark));
      expect(failure.error).toBeInstanceOf(AgentInvalidResponseError);
      expect(failure.error.message).toBe(`${WHERE} with a body that is not an agent job`);
      expect(failure.error.status).toBe(200);
      expect(failure.noEffect).toBe(false);
    }
  });

  it('drops what an answer adds, a prototype key included', () => {
    const parsed = jobFromAnswer('{"id":"j1","__proto__":{"admin":true},"extra":1}', false, WHERE, 200, mark);
    expect(Object.keys(parsed).sort()).toEqual(
      ['archivedAt', 'createdAt', 'id', 'model', 'prLink', 'source', 'status'].sort(),
    );
    expect((parsed as Record<string, unknown>).admin).toBeUndefined();
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });
});

describe('failureOfStatus: what an error status means', () => {
  const fail = (status: number, detail = '', method: 'GET' | 'POST' = 'POST', wait?: number) =>
    failureOfStatus(
      status,
      WHERE,
      detail,
      method,
      () => wait,
      () => NOW,
    );

  it('429 is the rate limit, surely without effect, with its reset time when the API said', () => {
    const failure = fail(429, 'quota used', 'POST', 90_000);
    expect(failure.error).toBeInstanceOf(AgentRateLimitedError);
    expect((failure.error as AgentRateLimitedError).resetAt).toEqual(new Date(NOW + 90_000));
    expect(failure.error.message).toBe(`${WHERE}: quota used`);
    expect(failure.noEffect).toBe(true);
    expect(failure.retryAfterMs).toBe(90_000);
    const unsaid = fail(429);
    expect((unsaid.error as AgentRateLimitedError).resetAt).toBeUndefined();
    expect(unsaid.error.message).toBe(`${WHERE}: rate limited`);
    expect(unsaid.retryAfterMs).toBeUndefined();
  });

  it('401 and 403 are an unusable key, 404 a missing job, each with its status', () => {
    for (const status of [401, 403]) {
      const failure = fail(status);
      expect(failure.error).toBeInstanceOf(AgentUnauthorizedError);
      expect(failure.error.status).toBe(status);
      expect(failure.error.message).toBe(`${WHERE}: unauthorized`);
      expect(failure.noEffect).toBe(true);
    }
    const missing = fail(404, 'Job not found', 'GET');
    expect(missing.error).toBeInstanceOf(AgentNotFoundError);
    expect(missing.error.status).toBe(404);
    expect(missing.noEffect).toBe(true);
    expect(missing.error.message).toBe(`${WHERE}: Job not found`);
    expect(fail(404).error.message).toBe(`${WHERE}: not found`);
  });

  it("any other 4xx is a refused request carrying the API's explanation, or the status", () => {
    for (const status of [400, 409, 413, 422]) {
      const failure = fail(status, 'prompt is empty');
      expect(failure.error).toBeInstanceOf(AgentBadRequestError);
      expect((failure.error as AgentBadRequestError).detail).toBe('prompt is empty');
      expect(failure.error.status).toBe(status);
      expect(failure.noEffect).toBe(true);
    }
    expect((fail(422).error as AgentBadRequestError).detail).toBe('HTTP 422');
  });

  it('4xx answers never ask when to retry', () => {
    let asked = 0;
    for (const status of [400, 401, 403, 404]) {
      failureOfStatus(
        status,
        WHERE,
        '',
        'GET',
        () => ++asked,
        () => NOW,
      );
    }
    expect(asked).toBe(0);
  });

  it('503 refused before doing anything: unavailable and surely without effect, for a POST too', () => {
    const failure = fail(503, 'maintenance', 'POST', 2_000);
    expect(failure.error).toBeInstanceOf(AgentUnavailableError);
    expect(failure.error.message).toBe(`${WHERE}: maintenance`);
    expect(failure.error.status).toBe(503);
    expect(failure.noEffect).toBe(true);
    expect(failure.retryAfterMs).toBe(2_000);
  });

  it('another 5xx (or an unexpected status) leaves a POST unknown and a GET unavailable', () => {
    for (const status of [500, 502, 504, 302]) {
      const post = fail(status);
      expect(post.error).toBeInstanceOf(AgentOutcomeUnknownError);
      expect(post.error.message).toBe(`${WHERE}: server error`);
      expect(post.error.status).toBe(status);
      expect(post.noEffect).toBe(false);
      const get = fail(status, 'upstream down', 'GET');
      expect(get.error).toBeInstanceOf(AgentUnavailableError);
      expect(get.error).not.toBeInstanceOf(AgentOutcomeUnknownError);
      expect(get.error.message).toBe(`${WHERE}: upstream down`);
      expect(get.noEffect).toBe(false);
      expect(fail(status, '', 'GET').error.message).toBe(`${WHERE}: server error`);
    }
  });
});

const coded = (code: string, cause?: unknown) => Object.assign(new Error('failed', { cause }), { code });

describe('errorCode', () => {
  it("finds the code on an error's causes, as fetch wraps the socket error", () => {
    expect(errorCode(new TypeError('fetch failed', { cause: coded('ECONNREFUSED') }))).toBe('ECONNREFUSED');
    expect(errorCode(coded('ECONNRESET', coded('ENOTFOUND')))).toBe('ECONNRESET');
  });

  it('looks at most four errors deep, and at errors only', () => {
    const deep = new Error('1', {
      cause: new Error('2', {
        cause: new Error('3', { cause: new Error('4', { cause: coded('EAI_AGAIN') }) }),
      }),
    });
    expect(errorCode(deep)).toBeUndefined();
    expect(errorCode({ code: 'ECONNREFUSED' })).toBeUndefined();
    expect(errorCode(Object.assign(new Error('x'), { code: 42 }))).toBeUndefined();
  });

  it('counts only failures before the request left as connect errors', () => {
    expect(CONNECT_ERROR_CODES.has('ECONNREFUSED')).toBe(true);
    expect(CONNECT_ERROR_CODES.has('ECONNRESET')).toBe(false);
  });
});

const RETRY_NOW = Date.UTC(2026, 0, 1, 12, 0, 0);
const wait = (headers: Record<string, string>) => parseRetryAfter(new Headers(headers), RETRY_NOW);

describe('parseRetryAfter', () => {
  it('reads Retry-After in seconds, fractions rounded to milliseconds', () => {
    expect(wait({ 'retry-after': '30' })).toBe(30_000);
    expect(wait({ 'retry-after': ' 1.5 ' })).toBe(1_500);
  });

  it('reads Retry-After as an HTTP date, never below zero', () => {
    expect(wait({ 'retry-after': 'Thu, 01 Jan 2026 12:00:45 GMT' })).toBe(45_000);
    expect(wait({ 'retry-after': 'Thu, 01 Jan 2026 11:59:00 GMT' })).toBe(0);
  });

  it('reads a reset header as a delta or as epoch seconds', () => {
    expect(wait({ 'x-ratelimit-reset': '20' })).toBe(20_000);
    expect(wait({ 'ratelimit-reset': String(RETRY_NOW / 1000 + 90) })).toBe(90_000);
  });

  it('caps the wait at a day', () => {
    expect(wait({ 'retry-after': '999999' })).toBe(MAX_RETRY_AFTER_MS);
  });

  it('ignores what is not a wait', () => {
    expect(wait({})).toBeUndefined();
    expect(wait({ 'retry-after': '-5' })).toBeUndefined();
    expect(wait({ 'retry-after': 'soon' })).toBeUndefined();
    expect(wait({ 'x-ratelimit-reset': '-1' })).toBeUndefined();
  });
});

const KEY = 'mint_not-a-real-secret-key';
const redact = createRedactor([KEY]);

describe('the answer caps', () => {
  it('read at most 1 MiB of a job and 64 KiB of an error', () => {
    expect(MAX_RESPONSE_BYTES).toBe(1_048_576);
    expect(MAX_ERROR_BODY_BYTES).toBe(65_536);
  });
});

describe('clipDetail', () => {
  it('keeps one line: whitespace, C0 and C1 control characters collapse to one space', () => {
    expect(clipDetail('  bad\r\n\tprompt\u0000\u0007here\u007f\u0085\u009bnow  ')).toBe(
      'bad prompt here now',
    );
    expect(clipDetail('\u001b[31mred')).toBe('[31mred');
  });

  it('keeps text up to the limit as it is and cuts longer text with an ellipsis, at the limit', () => {
    const exact = 'x'.repeat(MAX_ERROR_DETAIL_CHARS);
    expect(clipDetail(exact)).toBe(exact);
    const cut = clipDetail(`${exact}y`);
    expect(cut).toHaveLength(MAX_ERROR_DETAIL_CHARS);
    expect(cut.endsWith('x…')).toBe(true);
    expect(clipDetail('abcdefghij', 5)).toBe('abcd…');
  });

  it('does not end the cut on a space or half a surrogate pair', () => {
    expect(clipDetail('abc  defgh', 5)).toBe('abc…');
    // The fifth character would be the first half of the emoji: the cut moves before it.
    const clipped = clipDetail(`abc${'😀'.repeat(5)}`, 5);
    expect(clipped).toBe('abc…');
    expect(clipDetail(`abc${'😀'.repeat(5)}`, 6)).toBe('abc😀…');
    // The first and the last high surrogates, before a character that is none.
    expect(clipDetail('abcd\u{10000}xyz', 6)).toBe('abcd…');
    expect(clipDetail('abcd\u{10FC00}xyz', 6)).toBe('abcd…');
    expect(clipped).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
  });
});

describe('describeBody', () => {
  it('shows the documented {error} text, on one line, not the JSON around it', () => {
    expect(describeBody('{"error":"Prompt\\nis empty"}', redact)).toBe('Prompt is empty');
  });

  it('shows a body in any other shape as plain text, clipped', () => {
    expect(describeBody('<html>\n<b>502</b>\n</html>', redact)).toBe('<html> <b>502</b> </html>');
    expect(describeBody('{"message":"nope"}', redact)).toBe('{"message":"nope"}');
    expect(describeBody('{"error": 42}', redact)).toBe('{"error": 42}');
    expect(describeBody('', redact)).toBe('');
    expect(describeBody('x'.repeat(5_000), redact)).toHaveLength(MAX_ERROR_DETAIL_CHARS);
  });

  it('masks a secret the API echoes, before cutting, so no cut leaves a piece of it', () => {
    for (const at of [0, 280, 290, 299]) {
      const shown = describeBody(JSON.stringify({ error: `${'e'.repeat(at)}${KEY} rejected` }), redact);
      const plain = describeBody(`${'p'.repeat(at)}${KEY} rejected`, redact);
      for (const text of [shown, plain]) {
        expect(text.length).toBeLessThanOrEqual(MAX_ERROR_DETAIL_CHARS);
        expect(text).not.toContain('mint_not');
        expect(text).not.toContain('real-secret');
      }
    }
  });
});
