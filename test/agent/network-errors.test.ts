import { describe, expect, it } from 'vitest';
import { CONNECT_ERROR_CODES, errorCode } from '../../src/agent/network-errors.js';

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
