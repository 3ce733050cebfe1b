import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRedactor } from '../../src/logging/logger.js';
import {
  createSlackCaller,
  isChannelClosed,
  isNotAMember,
  POST_MAX_RATE_LIMIT_WAIT_MS,
  SlackCallError,
  type SlackCaller,
  toSlackCallError,
} from '../../src/slack/caller.js';
import { createSlackLimits } from '../../src/slack/limits.js';
import { appSlackClient } from '../helpers/slack-client.js';
import {
  BOT_TOKEN,
  type SlackHooks,
  type SlackStandIn,
  startSlackStandIn,
} from '../helpers/slack-stand-in.js';

let slack: SlackStandIn | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await slack?.close();
  slack = undefined;
});

/** The stand-in and a Web API client configured as the app configures its own. */
async function clientOnStandIn(token = BOT_TOKEN, hooks?: SlackHooks) {
  slack = await startSlackStandIn(hooks ? { hooks } : {});
  return { slack, client: appSlackClient(slack.apiUrl, { token }).client };
}

/** What the call threw, as the gateway sees it. */
async function failure(method: string, fn: () => Promise<unknown>): Promise<SlackCallError> {
  const error = await fn().then(
    () => undefined,
    (e: unknown) => e,
  );
  if (error === undefined) throw new Error(`${method} succeeded`);
  return toSlackCallError(method, error);
}

describe('Slack’s documented errors, as a call’s failure', () => {
  it.each([
    ['channel_not_found', { notAMember: true, closed: true }],
    ['not_in_channel', { notAMember: true, closed: true }],
    ['is_archived', { notAMember: false, closed: true }],
  ])('%s closes the channel to the bot, and cannot be fixed by a retry', async (code, expected) => {
    const { slack, client } = await clientOnStandIn();
    slack.fail('chat.postMessage', { error: code });
    const error = await failure('chat.postMessage', () =>
      client.chat.postMessage({ channel: 'C0DOCS', text: 'hi' }),
    );
    expect(error).toBeInstanceOf(SlackCallError);
    expect(error.code).toBe(code);
    expect(error.permanent).toBe(true);
    // Slack answered ok:false, so nothing was posted: safe to give up or tell the person.
    expect(error.isPlatformError).toBe(true);
    expect(isNotAMember(error.code)).toBe(expected.notAMember);
    expect(isChannelClosed(error.code)).toBe(expected.closed);
  });

  it('an update of a message that is gone is permanent, but says nothing of the channel', async () => {
    const { client } = await clientOnStandIn();
    const error = await failure('chat.update', () =>
      client.chat.update({ channel: 'C0DOCS', ts: '1700000000.000001', text: 'edited' }),
    );
    expect(error.code).toBe('message_not_found');
    expect(error.permanent).toBe(true);
    expect(isChannelClosed(error.code)).toBe(false);
  });

  it.each(['invalid_blocks', 'invalid_blocks_format', 'msg_blocks_too_long', 'invalid_metadata_format'])(
    'a post refused for its layout or metadata (%s) is permanent: sent again as it is, it is refused again',
    async (code) => {
      const { slack, client } = await clientOnStandIn();
      slack.fail('chat.postMessage', { error: code });
      const error = await failure('chat.postMessage', () =>
        client.chat.postMessage({ channel: 'C0DOCS', text: 'hi' }),
      );
      expect(error).toMatchObject({ code, permanent: true, isPlatformError: true });
    },
  );

  it('a scope the app lacks is permanent: an admin must act', async () => {
    const { slack, client } = await clientOnStandIn();
    slack.fail('conversations.info', { error: 'missing_scope' });
    const error = await failure('conversations.info', () => client.conversations.info({ channel: 'C0DOCS' }));
    expect(error).toMatchObject({ code: 'missing_scope', permanent: true, isPlatformError: true });
  });

  it('a refused token is a platform error that a later try (with a new token) may get past', async () => {
    const { client } = await clientOnStandIn('xoxb-test-revoked');
    const error = await failure('auth.test', () => client.auth.test());
    expect(error).toMatchObject({ code: 'invalid_auth', permanent: false, isPlatformError: true });
    expect(error.message).toBe('Slack auth.test failed: invalid_auth');
    expect(error.message).not.toContain('xoxb-test-revoked');
  });

  it('a 429 is "ratelimited" with Slack’s Retry-After, answered at once instead of waited out', async () => {
    const { slack, client } = await clientOnStandIn();
    slack.fail('chat.postMessage', { status: 429, retryAfter: 7 });
    const error = await failure('chat.postMessage', () =>
      client.chat.postMessage({ channel: 'C0DOCS', text: 'hi' }),
    );
    expect(error).toMatchObject({ code: 'ratelimited', retryAfterMs: 7_000, permanent: false });
    // A 429 is Slack refusing the call: nothing was posted.
    expect(error.isPlatformError).toBe(true);
    expect(slack.callsTo('chat.postMessage')).toHaveLength(1);
    expect(slack.messages).toHaveLength(0);
  });

  it('a server error is "http_<status>", retryable, and not known to have had no effect', async () => {
    const { slack, client } = await clientOnStandIn();
    slack.outage.begin('chat.postMessage');
    const error = await failure('chat.postMessage', () =>
      client.chat.postMessage({ channel: 'C0DOCS', text: 'hi' }),
    );
    expect(error).toMatchObject({ code: 'http_503', permanent: false, isPlatformError: false });
    expect(error.retryAfterMs).toBeUndefined();
  });

  it('a connection lost before any answer is "request_failed": the call may have happened', async () => {
    const { client } = await clientOnStandIn(BOT_TOKEN, {
      before: (call) => (call.method === 'chat.postMessage' ? 'drop' : undefined),
    });
    const error = await failure('chat.postMessage', () =>
      client.chat.postMessage({ channel: 'C0DOCS', text: 'hi' }),
    );
    expect(error).toMatchObject({ code: 'request_failed', permanent: false, isPlatformError: false });
  });

  it('passes on only Slack’s words as a code: an answer that was not Slack’s is "invalid_response"', async () => {
    const { slack, client } = await clientOnStandIn();
    slack.fail('chat.postMessage', { error: '<html>Bad gateway from the proxy: call +1 555 0100</html>' });
    const error = await failure('chat.postMessage', () =>
      client.chat.postMessage({ channel: 'C0DOCS', text: 'hi' }),
    );
    expect(error).toMatchObject({ code: 'invalid_response', isPlatformError: true, permanent: false });
    expect(error.message).not.toContain('proxy');
    slack.fail('chat.postMessage', { error: 'message_limit_exceeded' });
    const said = await failure('chat.postMessage', () =>
      client.chat.postMessage({ channel: 'C0DOCS', text: 'hi' }),
    );
    expect(said.code).toBe('message_limit_exceeded');
  });

  it('anything else thrown is "unexpected_error", keeping the original as its cause', () => {
    const original = new TypeError('boom');
    const error = toSlackCallError('chat.postMessage', original);
    expect(error).toMatchObject({ code: 'unexpected_error', permanent: false, isPlatformError: false });
    expect(error.cause).toBe(original);
  });

  it('codes outside the lists are neither a closed channel nor a missing membership', () => {
    for (const code of [undefined, 'ratelimited', 'http_500', 'user_not_found', 'channel_not_found_x'])
      expect([isNotAMember(code), isChannelClosed(code)]).toEqual([false, false]);
  });
});

describe('waiting out a short rate limit on a post', () => {
  /** A post to C0DOCS through the caller, waiting out short rate limits as the gateway's posts do. */
  const post =
    (caller: SlackCaller, channel = 'C0DOCS') =>
    () =>
      caller.call(
        'chat.postMessage',
        { channel, text: 'hi' },
        (client, args) => client.chat.postMessage(args),
        {
          channel,
          waitMs: POST_MAX_RATE_LIMIT_WAIT_MS,
        },
      );

  it('tries again after Slack’s Retry-After, and posts once', async () => {
    const { slack, caller } = await callerOnStandIn();
    slack.fail('chat.postMessage', { status: 429, retryAfter: 0 }, { status: 429, retryAfter: 0 });
    const answer = await post(caller)();
    expect(answer.ok).toBe(true);
    expect(slack.callsTo('chat.postMessage')).toHaveLength(3);
    expect(slack.messages).toHaveLength(1);
  });

  it('waits the whole Retry-After before the next try', async () => {
    let answered: () => void = () => {};
    const firstAnswer = new Promise<void>((resolve) => (answered = resolve));
    // The limits read the same clock as the fake timers.
    const clock = { at: 0 };
    const { slack, caller } = await callerOnStandIn({ after: () => answered() }, () => clock.at);
    slack.fail('chat.postMessage', { status: 429, retryAfter: 2 });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const posting = post(caller)();
    await firstAnswer;
    // Until the 429 is read the wait is not armed. vi.waitFor would move the fake clock on, so
    // turn the (real) event loop instead, for at most a few real seconds.
    const deadline = performance.now() + 5_000;
    while (vi.getTimerCount() === 0 && performance.now() < deadline)
      await new Promise((resolve) => setImmediate(resolve));
    expect(vi.getTimerCount()).toBeGreaterThan(0);
    clock.at += 1_999;
    await vi.advanceTimersByTimeAsync(1_999);
    expect(slack.callsTo('chat.postMessage')).toHaveLength(1);
    clock.at += 1;
    await vi.advanceTimersByTimeAsync(1);
    vi.useRealTimers();
    await posting;
    expect(slack.callsTo('chat.postMessage')).toHaveLength(2);
  });

  it('gives up after its tries, with Slack’s rate-limit error', async () => {
    const { slack, caller } = await callerOnStandIn();
    slack.fail('chat.postMessage', ...Array.from({ length: 3 }, () => ({ status: 429, retryAfter: 0 })));
    await expect(post(caller)()).rejects.toMatchObject({ code: 'ratelimited', deferred: false });
    expect(slack.callsTo('chat.postMessage')).toHaveLength(3);
    expect(slack.pendingFaults()).toBe(0);
  });

  it('does not wait out a Retry-After longer than its limit', async () => {
    const { slack, caller } = await callerOnStandIn();
    slack.fail('chat.postMessage', { status: 429, retryAfter: POST_MAX_RATE_LIMIT_WAIT_MS / 1000 + 1 });
    await expect(post(caller)()).rejects.toMatchObject({ code: 'ratelimited', retryAfterMs: 11_000 });
    expect(slack.callsTo('chat.postMessage')).toHaveLength(1);
  });

  it('does not try again after any other error', async () => {
    const { slack, caller } = await callerOnStandIn();
    slack.fail('chat.postMessage', { error: 'is_archived' }, { error: 'is_archived' });
    await expect(post(caller)()).rejects.toMatchObject({ code: 'is_archived' });
    expect(slack.callsTo('chat.postMessage')).toHaveLength(1);
  });

  it('defers the channel’s other posts while its Retry-After runs, and lets other channels post', async () => {
    const { slack, caller } = await callerOnStandIn();
    slack.fail('chat.postMessage', { status: 429, retryAfter: 30 });
    await expect(post(caller)()).rejects.toMatchObject({ code: 'ratelimited', deferred: false });
    // Another post to that channel is not made while Slack's wait runs: it fails at once, deferred.
    const held = await post(caller)().catch((e: unknown) => e);
    expect(held).toMatchObject({ code: 'ratelimited', deferred: true, isPlatformError: true });
    expect((held as SlackCallError).retryAfterMs).toBeGreaterThan(29_000);
    expect(slack.callsTo('chat.postMessage')).toHaveLength(1);
    await post(caller, 'C0OTHER')();
    expect(slack.callsTo('chat.postMessage')).toHaveLength(2);
  });
});

describe('a method Slack refused with a 429', () => {
  it('is not called again until its Retry-After has passed, by any caller of the process', async () => {
    const { slack, caller, reported } = await callerOnStandIn();
    slack.fail('chat.update', { status: 429, retryAfter: 20 });
    const update = () =>
      caller.call('chat.update', { channel: 'C0DOCS', ts: '1.1', text: 'hi' }, (client, args) =>
        client.chat.update(args),
      );
    await expect(update()).rejects.toMatchObject({ code: 'ratelimited', retryAfterMs: 20_000 });
    for (let i = 0; i < 5; i++) await expect(update()).rejects.toMatchObject({ deferred: true });
    expect(slack.callsTo('chat.update')).toHaveLength(1);
    // A deferred call is no failure of Slack's: only the 429 is reported.
    expect(reported).toEqual([['chat.update', 'ratelimited']]);
  });
});

const SECRET = 'pass<word>&Q7tail';

/** The caller on a Web API client configured as the app's, masking {@link SECRET}; what it logs and reports is kept. */
async function callerOnStandIn(hooks?: SlackHooks, now?: () => number) {
  slack = await startSlackStandIn(hooks ? { hooks } : {});
  const { client } = appSlackClient(slack.apiUrl);
  const debug: unknown[] = [];
  const reported: [string, string][] = [];
  const caller = createSlackCaller({
    client,
    logger: { debug: (msg, fields) => debug.push([msg, fields]) },
    redact: createRedactor([SECRET]),
    onError: (method, code) => reported.push([method, code]),
    limits: createSlackLimits(now ? { now } : {}),
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
