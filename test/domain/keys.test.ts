import { describe, expect, it } from 'vitest';
import { stepExecutionOfKey, triggerKeys } from '../../src/domain/keys.js';

describe('trigger keys', () => {
  // Recorded keys are read by later releases: their text must never change.
  it('keep the text earlier releases recorded', () => {
    expect(triggerKeys.command('1234.5678.abcd')).toBe('command:1234.5678.abcd');
    expect(triggerKeys.mention('C0DOCS', '1700000000.000100')).toBe('mention:C0DOCS:1700000000.000100');
    expect(triggerKeys.direct('D0DIRECT', '1700000000.000200')).toBe('direct:D0DIRECT:1700000000.000200');
    expect(triggerKeys.shortcut('V0MODAL')).toBe('shortcut:V0MODAL');
    expect(triggerKeys.step('Fx0EXEC')).toBe('step:Fx0EXEC');
    expect(triggerKeys.retry(42)).toBe('retry:42');
    expect(triggerKeys.rehearsal('instance-a', 3)).toBe('rehearsal:instance-a:3');
  });

  it("read a step's execution id back from its key, and nothing from another kind", () => {
    expect(stepExecutionOfKey(triggerKeys.step('Fx0EXEC'))).toBe('Fx0EXEC');
    expect(stepExecutionOfKey(triggerKeys.command('step:1'))).toBeUndefined();
    expect(stepExecutionOfKey(triggerKeys.retry(7))).toBeUndefined();
  });
});
