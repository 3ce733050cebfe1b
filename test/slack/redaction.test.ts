import { describe, expect, it } from 'vitest';
import { createRedactor } from '../../src/logging/logger.js';
import { escapeMrkdwn } from '../../src/slack/mrkdwn.js';
import { redactDeep } from '../../src/slack/redaction.js';

const SECRET = 'pass<word>&Q7tail';
const redact = createRedactor([SECRET]);

describe('what the bot shows in Slack', () => {
  it('is masked in every string however deep, also as mrkdwn escapes it', () => {
    const blocks = [
      { type: 'section', text: { type: 'mrkdwn', text: `said ${escapeMrkdwn(SECRET)}` } },
      { type: 'context', elements: [{ type: 'plain_text', text: `raw ${SECRET}` }] },
    ];
    const masked = JSON.stringify(redactDeep(blocks, redact));
    expect(masked).not.toContain('Q7tail');
    expect(masked).toContain('said [redacted]');
    expect(masked).toContain('raw [redacted]');
  });
});
