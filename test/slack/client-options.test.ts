import { WebAPIRateLimitedError, WebClient } from '@slack/web-api';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, type LogLevel } from '../../src/logging/logger.js';
import { SLACK_CALL_TIMEOUT_MS, slackClientOptions } from '../../src/slack/client-options.js';
import { BOT_TOKEN, type SlackStandIn, startSlackStandIn } from '../helpers/slack-stand-in.js';

let slack: SlackStandIn | undefined;
afterEach(async () => {
  await slack?.close();
  slack = undefined;
});

/** A Web API client built from the app's options, talking to a fresh stand-in. */
async function clientFromOptions(component: 'web-api' | 'bolt' = 'web-api', logLevel: LogLevel = 'warn') {
  slack = await startSlackStandIn();
  const lines: string[] = [];
  const logger = createLogger({ level: logLevel, secrets: [BOT_TOKEN], write: (line) => lines.push(line) });
  const config = {
    slack: { botToken: BOT_TOKEN, signingSecret: undefined, appToken: undefined, apiUrl: slack.apiUrl },
    logLevel,
  };
  const options = slackClientOptions(config, logger, component);
  return { slack, options, lines, client: new WebClient(BOT_TOKEN, options) };
}

describe('the options of every Web API client in the process', () => {
  it('reach Slack at SLACK_API_URL', async () => {
    const { slack, client } = await clientFromOptions();
    const answer = await client.auth.test();
    expect(answer.user_id).toBe('U0BOT');
    expect(slack.callsTo('auth.test')).toHaveLength(1);
  });

  it('never retry a failed call themselves: a post whose answer was lost must not be made twice', async () => {
    const { slack, client } = await clientFromOptions();
    slack.outage.begin('chat.postMessage');
    await expect(client.chat.postMessage({ channel: 'C0DOCS', text: 'hi' })).rejects.toMatchObject({
      statusCode: 503,
    });
    expect(slack.callsTo('chat.postMessage')).toHaveLength(1);
  });

  it('refuse a rate-limited call at once, with Slack’s Retry-After, instead of waiting it out', async () => {
    const { slack, client } = await clientFromOptions();
    slack.fail('chat.postMessage', { status: 429, retryAfter: 120 });
    const error = await client.chat.postMessage({ channel: 'C0DOCS', text: 'hi' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebAPIRateLimitedError);
    expect((error as WebAPIRateLimitedError).retryAfter).toBe(120);
    expect(slack.callsTo('chat.postMessage')).toHaveLength(1);
  });

  it('abandon a call after ten seconds', async () => {
    const { options } = await clientFromOptions();
    expect(SLACK_CALL_TIMEOUT_MS).toBe(10_000);
    expect(options.timeout).toBe(SLACK_CALL_TIMEOUT_MS);
  });

  it.each(['web-api', 'bolt'] as const)(
    'log the client’s warnings as %s through the app’s logger, secrets masked',
    async (component) => {
      const { slack, client, lines } = await clientFromOptions(component);
      slack.fail('auth.test', { warning: `superfluous_charset (token ${BOT_TOKEN})` });
      await client.auth.test();
      const warnings = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(warnings).toEqual([
        // The client hands each warning over as forEach does: the text, then its index and the list.
        expect.objectContaining({
          level: 'warn',
          component,
          msg: expect.stringMatching(/^superfluous_charset \(token \[redacted\]\) /),
        }),
      ]);
      expect(lines.join('\n')).not.toContain(BOT_TOKEN);
    },
  );

  it('leave filtering to LOG_LEVEL: at error, the client’s warnings are not written', async () => {
    const { slack, client, lines } = await clientFromOptions('web-api', 'error');
    slack.fail('auth.test', { warning: 'superfluous_charset' });
    await client.auth.test();
    expect(lines).toEqual([]);
  });
});
