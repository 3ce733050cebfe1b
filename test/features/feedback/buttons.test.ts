import { describe, expect, it } from 'vitest';
import {
  FEEDBACK_ACTION_ID,
  feedbackBlock,
  feedbackButtonValue,
  parseFeedbackButtonValue,
  parseOutcomeRef,
  WHAT_TO_FIX_ACTION_ID,
  whatToFixButton,
} from '../../../src/features/feedback/buttons.js';
import { blockProblems } from '../../helpers/block-kit.js';

describe('feedbackBlock', () => {
  it('is a context_actions block of feedback buttons Slack accepts', () => {
    expect(blockProblems([feedbackBlock(42, 3)], 50)).toEqual([]);
  });

  it('names the outcome (job and run) and the vote in each button, readable back', () => {
    const block = feedbackBlock(9_999_999_999, 7) as {
      type: string;
      elements: {
        type: string;
        action_id: string;
        positive_button: { value: string; accessibility_label: string; text: { text: string } };
        negative_button: { value: string; accessibility_label: string; text: { text: string } };
      }[];
    };
    expect(block.type).toBe('context_actions');
    const [buttons] = block.elements;
    expect(buttons?.type).toBe('feedback_buttons');
    expect(buttons?.action_id).toBe(FEEDBACK_ACTION_ID);
    expect(parseFeedbackButtonValue(buttons?.positive_button.value ?? '')).toEqual({
      value: 'positive',
      jobId: 9_999_999_999,
      runSeq: 7,
    });
    expect(parseFeedbackButtonValue(buttons?.negative_button.value ?? '')).toEqual({
      value: 'negative',
      jobId: 9_999_999_999,
      runSeq: 7,
    });
    expect(buttons?.positive_button.text.text).toBe('👍');
    expect(buttons?.negative_button.accessibility_label).toBe('This outcome was not useful');
    expect(buttons?.positive_button.accessibility_label).toBe('This outcome was useful');
  });
});

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

describe('whatToFixButton', () => {
  it('is a button Slack accepts whose value names the outcome, readable back', () => {
    const block = whatToFixButton({ jobId: 9_999_999_999, runSeq: 7 }) as {
      elements: { action_id: string; value: string }[];
    };
    expect(blockProblems([block], 50)).toEqual([]);
    expect(block.elements[0]?.action_id).toBe(WHAT_TO_FIX_ACTION_ID);
    expect(parseOutcomeRef(block.elements[0]?.value ?? '')).toEqual({ jobId: 9_999_999_999, runSeq: 7 });
  });

  it.each(['', '0:1', '1:0', '1', '1:1:1', 'negative:1:1', '1:1 ', '12345678901:1', '-1:1'])(
    'reads no outcome from %j',
    (raw) => {
      expect(parseOutcomeRef(raw)).toBeUndefined();
    },
  );
});
