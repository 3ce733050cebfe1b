import { WebAPIRateLimitedError } from '@slack/web-api';
import { afterEach, describe, expect, it } from 'vitest';
import { appSlackClient } from './slack-client.js';
import { createRateLimiter, SLACK_RATE_LIMITS } from './slack-rate-limits.js';
import { type SlackStandIn, startSlackStandIn } from './slack-stand-in.js';

/** A limiter on a clock the test moves. */
function limiterAt(table = SLACK_RATE_LIMITS) {
  const clock = { ms: 0 };
  return { clock, limiter: createRateLimiter(table, () => clock.ms) };
}

describe('the rate limiter', () => {
  it('lets a Tier 2 method burst three calls, then asks for the seconds until its next token', () => {
    const { clock, limiter } = limiterAt();
    const remove = () => limiter.admit('reactions.remove', {});
    expect([remove(), remove(), remove()]).toEqual([undefined, undefined, undefined]);
    // 20 a minute: one token every 3 s.
    expect(remove()).toEqual({ retryAfterS: 3 });
    clock.ms = 1_000;
    expect(remove()).toEqual({ retryAfterS: 2 });
    clock.ms = 3_000;
    expect(remove()).toBeUndefined();
    expect(limiter.counts()['reactions.remove']).toEqual({ accepted: 4, refused: 2, duringRetryAfter: 1 });
  });

  it('counts every call made before the last Retry-After ran out, let through or not', () => {
    const { clock, limiter } = limiterAt({ 'chat.update': { perMinute: 40, burst: 1 } });
    limiter.admit('chat.update', {});
    // A token every 1.5 s, asked for in whole seconds.
    expect(limiter.admit('chat.update', {})).toEqual({ retryAfterS: 2 });
    clock.ms = 1_600;
    expect(limiter.admit('chat.update', {})).toBeUndefined();
    clock.ms = 5_000;
    limiter.admit('chat.update', {});
    expect(limiter.counts()['chat.update']).toEqual({ accepted: 3, refused: 1, duringRetryAfter: 1 });
  });

  it('gives chat.postMessage one bucket per channel, and never less than 1 s', () => {
    const { limiter } = limiterAt();
    const post = (channel: string) => limiter.admit('chat.postMessage', { channel });
    expect([post('C1'), post('C1'), post('C1')]).toEqual([undefined, undefined, undefined]);
    expect(post('C1')).toEqual({ retryAfterS: 1 });
    expect(post('C2')).toBeUndefined();
  });

  it('counts methods it does not limit, and limits nothing with an empty table', () => {
    const { limiter } = limiterAt({});
    for (let i = 0; i < 100; i++) expect(limiter.admit('reactions.remove', {})).toBeUndefined();
    expect(limiterAt().limiter.admit('auth.test', {})).toBeUndefined();
    expect(limiter.counts()).toEqual({
      'reactions.remove': { accepted: 100, refused: 0, duringRetryAfter: 0 },
    });
  });
});

describe('the Slack stand-in with rate limits', () => {
  let slack: SlackStandIn | undefined;
  afterEach(async () => {
    await slack?.close();
    slack = undefined;
  });

  it('answers a call over the limit as Slack does, without processing it', async () => {
    slack = await startSlackStandIn({ rateLimits: SLACK_RATE_LIMITS });
    const { client } = appSlackClient(slack.apiUrl);
    for (const name of ['a', 'b', 'c', 'd'])
      await client.reactions.add({ channel: 'C1', timestamp: '1.1', name });
    // reactions.remove is Tier 2: three at once, then one every 3 s.
    for (const name of ['a', 'b', 'c'])
      await client.reactions.remove({ channel: 'C1', timestamp: '1.1', name });
    const fourth = await client.reactions.remove({ channel: 'C1', timestamp: '1.1', name: 'd' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(fourth).toBeInstanceOf(WebAPIRateLimitedError);
    expect((fourth as WebAPIRateLimitedError).retryAfter).toBe(3);
    expect(slack.reactionsOn('C1', '1.1')).toEqual(['d']);
    expect(slack.callsTo('reactions.remove')).toHaveLength(3);
    expect(slack.rateLimitCounts()?.['reactions.remove']).toEqual({
      accepted: 3,
      refused: 1,
      duringRetryAfter: 0,
    });
  });

  it('answers the 429 with Retry-After and Slack’s body', async () => {
    slack = await startSlackStandIn({ rateLimits: { 'chat.update': { perMinute: 1, burst: 1 } } });
    const call = () =>
      fetch(`${slack?.apiUrl}chat.update`, {
        method: 'POST',
        headers: { authorization: 'Bearer xoxb-test-token', 'content-type': 'application/json' },
        body: JSON.stringify({ channel: 'C1', ts: '1.1', text: 'x' }),
      });
    expect((await call()).status).toBe(200);
    const refused = await call();
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(await refused.json()).toEqual({ ok: false, error: 'ratelimited' });
  });

  it('limits and counts nothing without them', async () => {
    slack = await startSlackStandIn();
    const { client } = appSlackClient(slack.apiUrl);
    for (let i = 0; i < 5; i++)
      await client.reactions.add({ channel: 'C1', timestamp: '1.1', name: `e${i}` });
    for (let i = 0; i < 5; i++)
      await client.reactions.remove({ channel: 'C1', timestamp: '1.1', name: `e${i}` });
    expect(slack.callsTo('reactions.remove')).toHaveLength(5);
    expect(slack.rateLimitCounts()).toBeUndefined();
  });
});
