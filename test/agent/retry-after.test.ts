import { describe, expect, it } from 'vitest';
import { MAX_RETRY_AFTER_MS, parseRetryAfter } from '../../src/agent/retry-after.js';

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);
const wait = (headers: Record<string, string>) => parseRetryAfter(new Headers(headers), NOW);

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
    expect(wait({ 'ratelimit-reset': String(NOW / 1000 + 90) })).toBe(90_000);
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
