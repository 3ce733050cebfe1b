import { describe, expect, it } from 'vitest';
import { isUserId, SLACK_ID, userIdSchema } from '../../src/slack/ids.js';

describe('Slack ids', () => {
  it('takes a person’s id, of a workspace or of an organisation', () => {
    expect(isUserId('U0ALICE')).toBe(true);
    expect(isUserId('W0GRID')).toBe(true);
  });

  it('takes nothing else for a person', () => {
    for (const id of ['C0DOCS', 'B0BOT', 'u0alice', 'U', 'U0 ALICE', 'docs-bot', ''])
      expect(isUserId(id), id).toBe(false);
  });

  it('reads only upper-case letters and digits as an id', () => {
    expect(SLACK_ID.test('C0DOCS')).toBe(true);
    expect(SLACK_ID.test('C0DOCS>')).toBe(false);
    expect(SLACK_ID.test('A'.repeat(41))).toBe(false);
  });

  it('parses a person’s id in a payload by the same rule, naming no value when it fails', () => {
    expect(userIdSchema.parse('W0GRID')).toBe('W0GRID');
    const failed = userIdSchema.safeParse('<!channel>');
    expect(failed.success).toBe(false);
    expect(JSON.stringify(failed.error?.issues)).not.toContain('<!channel>');
  });
});
