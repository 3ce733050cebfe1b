import { describe, expect, it } from 'vitest';
import { isEnterpriseId, isTeamId, isUserId, SLACK_ID, userIdSchema } from '../../src/slack/ids.js';

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

describe('workspace and organisation ids', () => {
  it('tells a workspace’s T… id from an organisation’s E… id', () => {
    expect(isTeamId('T0TEST')).toBe(true);
    expect(isEnterpriseId('E0ACME')).toBe(true);
    for (const id of ['E0ACME', 'U0ALICE', 't0test', 'T', 'T0 TEST', ''])
      expect(isTeamId(id), id).toBe(false);
    for (const id of ['T0TEST', 'W0BOT', 'e0acme', 'E', 'E0ACME>', ''])
      expect(isEnterpriseId(id), id).toBe(false);
  });
});
