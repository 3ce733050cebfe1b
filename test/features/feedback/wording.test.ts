import { describe, expect, it } from 'vitest';
import { feedbackText } from '../../../src/features/feedback/wording.js';

describe('feedbackText', () => {
  it('thanks with the vote given, and says how to change it', () => {
    expect(feedbackText.recorded('positive')).toBe(
      ':thumbsup: Thanks: your feedback on this outcome is recorded. Press the other one to change it.',
    );
    expect(feedbackText.recorded('negative').startsWith(':thumbsdown: Thanks')).toBe(true);
  });

  it('says when the same vote was already recorded', () => {
    expect(feedbackText.unchanged('negative')).toBe(
      ':thumbsdown: Your feedback on this outcome was already recorded.',
    );
    expect(feedbackText.unchanged('positive').startsWith(':thumbsup:')).toBe(true);
  });

  it('says plainly when nothing was recorded', () => {
    expect(feedbackText.unknown()).toContain('so it was not recorded');
    expect(feedbackText.notRecorded()).toContain('Please press it again');
  });
});
