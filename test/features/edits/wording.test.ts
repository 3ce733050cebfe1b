import { describe, expect, it } from 'vitest';
import { editText } from '../../../src/features/edits/wording.js';

describe('editText', () => {
  it('tells the person an edit or deletion came too late to reach the agent, and what to do instead', () => {
    expect(editText.editedLate()).toBe(
      ':pencil2: The docs agent already has the earlier version of your message, so this edit does not reach it. To change course, reply in the thread with what you want now.',
    );
    expect(editText.deletedLate()).toContain('deleting it does not take it back');
    expect(editText.deletedLate()).toContain('reply in the thread with what you want now');
    expect(editText.withdrawn()).toContain('will not be sent to the agent');
    expect(editText.notRecorded()).toContain('may still get the earlier version');
  });

  it('names the length of an overlong edit and the limit', () => {
    expect(editText.editTooLong(12_345, 10_000)).toBe(
      ':straight_ruler: Your edit is 12345 characters long; the limit is 10000. The earlier version is what the docs agent gets.',
    );
  });
});
