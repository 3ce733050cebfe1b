import { describe, expect, it } from 'vitest';
import { implicitRunKey, runKeyOf, runKeys, stepExecutionOfKey, triggerKeys } from '../../src/domain/keys.js';

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

describe('run keys', () => {
  it('keep the text earlier releases recorded: a message is keyed by its ts, as it always was', () => {
    expect(runKeys.message('1700000000.000200')).toBe('1700000000.000200');
    expect(runKeys.modal('V0FIX')).toBe('modal:V0FIX');
    expect(runKeys.step('Fx0EXEC')).toBe('step:Fx0EXEC');
    expect(runKeys.first()).toBe('first');
  });

  it('are built from the source a run came from', () => {
    expect(runKeyOf({ kind: 'message', ts: '1.2' })).toBe(runKeys.message('1.2'));
    expect(runKeyOf({ kind: 'modal', viewId: 'V0FIX' })).toBe(runKeys.modal('V0FIX'));
    expect(runKeyOf({ kind: 'step', executionId: 'Fx0EXEC' })).toBe(runKeys.step('Fx0EXEC'));
  });

  it('key a run recorded without one by its message, or as a first run', () => {
    expect(implicitRunKey('1.2')).toBe('1.2');
    expect(implicitRunKey(null)).toBe('first');
  });

  it('never take a message ts for the key of another source', () => {
    for (const key of [runKeys.modal('1.2'), runKeys.step('1.2'), runKeys.first()])
      expect(key).not.toMatch(/^\d+\.\d+$/);
  });
});
