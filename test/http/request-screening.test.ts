import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES, MAX_CLOCK_SKEW_S, screenRequest } from '../../src/http/request-screening.js';

const NOW_MS = 1_700_000_000_000;
const request = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;
const signed = (extra: Record<string, string> = {}) =>
  request({
    'x-slack-signature': 'v0=abc',
    'x-slack-request-timestamp': String(NOW_MS / 1000),
    'content-type': 'application/json',
    'content-length': '100',
    ...extra,
  });

describe('screenRequest', () => {
  it('lets a signed, timely, small body of a known type through', () => {
    expect(screenRequest(signed(), NOW_MS)).toBeUndefined();
    expect(
      screenRequest(signed({ 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' }), NOW_MS),
    ).toBeUndefined();
  });

  it("lets only a small unsigned form through, as Slack's ssl_check", () => {
    const form = { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '40' };
    expect(screenRequest(request(form), NOW_MS)).toBeUndefined();
    expect(screenRequest(request({ ...form, 'content-length': '4096' }), NOW_MS)?.status).toBe(401);
    expect(
      screenRequest(request({ 'content-type': 'application/json', 'content-length': '40' }), NOW_MS)?.status,
    ).toBe(401);
  });

  it('refuses a timestamp outside the allowed skew either way', () => {
    const at = (s: number) => signed({ 'x-slack-request-timestamp': String(s) });
    expect(screenRequest(at(NOW_MS / 1000 + MAX_CLOCK_SKEW_S + 1), NOW_MS)?.status).toBe(401);
    expect(screenRequest(at(NOW_MS / 1000 - MAX_CLOCK_SKEW_S - 1), NOW_MS)?.status).toBe(401);
    expect(screenRequest(at(NOW_MS / 1000 - MAX_CLOCK_SKEW_S), NOW_MS)).toBeUndefined();
  });

  it('refuses unknown body types and bodies over the limit', () => {
    expect(screenRequest(signed({ 'content-type': 'text/plain' }), NOW_MS)?.status).toBe(415);
    expect(screenRequest(signed({ 'content-length': String(MAX_BODY_BYTES + 1) }), NOW_MS)?.status).toBe(413);
  });
});
