import { afterEach, describe, expect, it } from 'vitest';
import { createRedactor } from '../../src/logging/logger.js';
import { createSlackCaller } from '../../src/slack/caller.js';
import { SlackCallError } from '../../src/slack/slack-errors.js';
import { appSlackClient } from '../helpers/slack-client.js';
import { type SlackStandIn, startSlackStandIn } from '../helpers/slack-stand-in.js';

const SECRET = 'pass<word>&Q7tail';

let slack: SlackStandIn | undefined;
afterEach(async () => {
  await slack?.close();
  slack = undefined;
});

/** The caller on a Web API client configured as the app's, masking {@link SECRET}; what it logs and reports is kept. */
async function callerOnStandIn() {
  slack = await startSlackStandIn();
  const { client } = appSlackClient(slack.apiUrl);
  const debug: unknown[] = [];
  const reported: [string, string][] = [];
  const caller = createSlackCaller({
    client,
    logger: { debug: (msg, fields) => debug.push([msg, fields]) },
    redact: createRedactor([SECRET]),
    onError: (method, code) => reported.push([method, code]),
  });
  return { slack, caller, debug, reported };
}

describe('a Slack call through the caller', () => {
  it('reports a failure once, by method and code, and throws it typed', async () => {
    const { slack, caller, debug, reported } = await callerOnStandIn();
    slack.fail('chat.postMessage', { error: 'not_in_channel' });
    const post = () =>
      caller.call('chat.postMessage', { channel: 'C0DOCS', text: 'hi' }, (client, args) =>
        client.chat.postMessage(args),
      );
    const thrown = await post().catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(SlackCallError);
    expect((thrown as SlackCallError).code).toBe('not_in_channel');
    expect(reported).toEqual([['chat.postMessage', 'not_in_channel']]);
    expect(debug).toEqual([['Slack call failed', { method: 'chat.postMessage', code: 'not_in_channel' }]]);
    // The next call goes through and is not reported.
    const answer = await post();
    expect(answer.ts).toBe(slack.messages[0]?.ts);
    expect(reported).toHaveLength(1);
  });

  it('keeps an error that is already typed as it is, its method included', async () => {
    const { caller, reported } = await callerOnStandIn();
    const inner = new SlackCallError('conversations.replies', 'ratelimited', { retryAfterMs: 3_000 });
    await expect(caller.call('outer.method', {}, () => Promise.reject(inner))).rejects.toBe(inner);
    expect(reported).toEqual([['outer.method', 'ratelimited']]);
  });

  it('masks every string of its arguments however deep, and sends what the call adds as it is', async () => {
    const { slack, caller } = await callerOnStandIn();
    const blocks = [
      { type: 'section', text: { type: 'mrkdwn', text: 'said pass&lt;word&gt;&amp;Q7tail' } },
      { type: 'context', elements: [{ type: 'plain_text', text: `raw ${SECRET}` }] },
    ];
    const metadata = { event_type: 'docs_agent_note', event_payload: { key: 'note:1' } };
    await caller.call(
      'chat.postMessage',
      { channel: 'C0DOCS', text: `echo ${SECRET}`, blocks },
      (client, args) => client.chat.postMessage({ ...args, metadata }),
    );
    const [sent] = slack.callsTo('chat.postMessage');
    expect(JSON.stringify(sent?.args)).not.toContain('Q7tail');
    expect(sent?.args).toMatchObject({ channel: 'C0DOCS', text: 'echo [redacted]' });
    expect(JSON.stringify(sent?.args.blocks)).toContain('said [redacted]');
    expect(JSON.stringify(sent?.args.blocks)).toContain('raw [redacted]');
    expect(slack.messages[0]?.metadata).toEqual(metadata);
  });

  it('masks a value as it masks what it sends, for comparing with what was sent', async () => {
    const { caller } = await callerOnStandIn();
    expect(caller.mask({ text: `key ${SECRET}`, n: 3 })).toEqual({ text: 'key [redacted]', n: 3 });
  });
});
