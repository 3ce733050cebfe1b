import { describe, expect, it } from 'vitest';
import { tryAgainText } from '../../../src/features/try-again/wording.js';

describe('tryAgainText', () => {
  it('says a job that cannot be tried again started nothing, mentioning nobody', () => {
    const said = tryAgainText.notRetryable();
    expect(said).toContain('This job cannot be tried again');
    expect(said).toContain('Nothing was started.');
    expect(said).not.toMatch(/<[@!#]/);
  });
});
