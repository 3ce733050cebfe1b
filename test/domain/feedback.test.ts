import { describe, expect, it } from 'vitest';
import { feedbackButtonValue, parseFeedbackButtonValue } from '../../src/domain/feedback.js';

describe('feedback button values', () => {
  it('name the vote and the outcome, and read back to the same vote', () => {
    const vote = { jobId: 42, runSeq: 3, value: 'negative' as const };
    expect(feedbackButtonValue(vote)).toBe('negative:42:3');
    expect(parseFeedbackButtonValue('negative:42:3')).toEqual(vote);
    expect(parseFeedbackButtonValue('positive:1:1')).toEqual({ jobId: 1, runSeq: 1, value: 'positive' });
  });

  it('read nothing from a value this app did not make', () => {
    for (const raw of [
      'neutral:1:1',
      'positive:0:1',
      'positive:1:01',
      'positive:1',
      'positive:12345678901:1',
      ' positive:1:1',
    ])
      expect(parseFeedbackButtonValue(raw)).toBeUndefined();
  });
});
