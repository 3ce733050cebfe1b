import { describe, expect, it } from 'vitest';
import { jobTitle } from '../../src/blocks/job-title.js';

const live = (instruction: string) => ({ instruction, erasedAt: null });

describe('jobTitle', () => {
  it('collapses whitespace and control characters to single spaces', () => {
    expect(jobTitle(live('  Document\n\tthe\u0007 cache  layer '), 100)).toBe('Document the cache layer');
  });

  it('bounds the length, the ellipsis included', () => {
    expect(jobTitle(live('Document the cache layer'), 12)).toBe('Document th…');
  });

  it('is empty once retention erased the instruction', () => {
    expect(jobTitle({ instruction: 'Document the cache layer', erasedAt: 1_700_000_000_000 }, 100)).toBe('');
  });
});
