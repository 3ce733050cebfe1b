import { describe, expect, it } from 'vitest';
import { createRedactor } from '../../src/logging/logger.js';
import type { SlackGateway } from '../../src/slack/gateway.js';
import { escapeMrkdwn, md } from '../../src/slack/mrkdwn.js';
import { redactDeep, redactingGateway } from '../../src/slack/redaction.js';

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

  it('is masked by the gateway on the way out, leaving message metadata as the bot wrote it', async () => {
    const sent: unknown[] = [];
    const record =
      (method: string) =>
      async (...args: unknown[]) => {
        sent.push({ method, args });
        return 'ts';
      };
    const inner = {
      postMessage: record('postMessage'),
      updateMessage: record('updateMessage'),
      postEphemeral: record('postEphemeral'),
      respond: record('respond'),
      openView: record('openView'),
      publishHome: record('publishHome'),
      assistantThread: record('assistantThread'),
      findUnmarked: record('findUnmarked'),
    } as unknown as SlackGateway;
    const slack = redactingGateway(inner, redact);
    const text = md`echo ${escapeMrkdwn(SECRET)}`;
    const metadata = { eventType: 'docs_agent_note', key: 'note:1' };
    await slack.postMessage({ channel: 'C0GENERAL', text, blocks: [{ type: 'section', text }], metadata });
    await slack.updateMessage({ channel: 'C0GENERAL', ts: '1.2', text });
    await slack.postEphemeral({ channel: 'C0GENERAL', user: 'U0ALICE', text });
    await slack.respond('https://hooks.slack.test/r', text);
    await slack.openView('trigger', { type: 'modal', title: { type: 'plain_text', text: SECRET } });
    await slack.publishHome('U0ALICE', { type: 'home', blocks: [{ type: 'section', text }] });
    await slack.assistantThread({ channel: 'D0ALICE', threadTs: '1.2', status: SECRET, title: SECRET });
    // A post made without metadata is looked for by its text, as it was posted: masked.
    await slack.findUnmarked({ channel: 'C0GENERAL', threadTs: '1.2', oldest: 1, text });

    expect(sent).toHaveLength(8);
    expect(JSON.stringify(sent)).not.toContain('Q7tail');
    expect(JSON.stringify(sent[0])).toContain('"metadata":{"eventType":"docs_agent_note","key":"note:1"}');
  });
});
