import { LogLevel } from '@slack/bolt';
import { WebAPIRateLimitedError, WebClient } from '@slack/web-api';
import { afterEach, describe, expect, it } from 'vitest';
import { type LogLevel as AppLogLevel, createLogger } from '../../src/logging/logger.js';
import {
  SLACK_CALL_TIMEOUT_MS,
  slackClientOptions,
  slackLogger,
  slackLogLevel,
} from '../../src/slack/client-options.js';
import { BOT_TOKEN, type SlackStandIn, startSlackStandIn } from '../helpers/slack-stand-in.js';

describe('the options of every Web API client in the process', () => {
  let slack: SlackStandIn | undefined;
  afterEach(async () => {
    await slack?.close();
    slack = undefined;
  });

  /** A Web API client built from the app's options, talking to a fresh stand-in. */
  async function clientFromOptions(
    component: 'web-api' | 'bolt' = 'web-api',
    logLevel: AppLogLevel = 'warn',
  ) {
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

describe('the Slack libraries’ logger', () => {
  /** Shaped as Slack's tokens are (prefix, digits, dashes), obviously fake, and in no configuration. */
  const BOT_TOKEN = 'xoxb-0-0-notarealtokenatall';
  const APP_TOKEN = 'xapp-1-fake-notarealapptoken';

  function logged(level: AppLogLevel, secrets: string[] = []) {
    const lines: string[] = [];
    const logger = createLogger({ level, secrets, write: (line) => lines.push(line) });
    const parsed = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    return { logger, lines, parsed };
  }

  let slack: SlackStandIn | undefined;
  afterEach(async () => {
    await slack?.close();
    slack = undefined;
  });

  it('writes each level as one JSON line of the app’s, with the owning component', () => {
    const { logger, parsed } = logged('debug');
    const log = slackLogger(logger, 'bolt', 'debug');
    log.debug('a', 'b');
    log.info('c');
    log.warn('d');
    log.error('e');
    expect(parsed().map(({ level, msg, component }) => ({ level, msg, component }))).toEqual([
      { level: 'debug', msg: 'a b', component: 'bolt' },
      { level: 'info', msg: 'c', component: 'bolt' },
      { level: 'warn', msg: 'd', component: 'bolt' },
      { level: 'error', msg: 'e', component: 'bolt' },
    ]);
  });

  it('writes errors by name and message, objects as JSON, and what JSON cannot hold as text', () => {
    const { logger, parsed } = logged('debug');
    const log = slackLogger(logger, 'web-api', 'debug');
    const circular: Record<string, unknown> = { a: 1 };
    circular.self = circular;
    log.warn('failed:', new TypeError('socket hang up'), { code: 'E1', n: 2 }, 7, undefined, circular);
    expect(parsed()[0]?.msg).toBe(
      'failed: TypeError: socket hang up {"code":"E1","n":2} 7 undefined [object Object]',
    );
  });

  it('never writes a token, whether in text, an error or an object', () => {
    const { logger, lines } = logged('debug');
    const log = slackLogger(logger, 'web-api', 'debug');
    log.debug(`http request headers: {"Authorization":"Bearer ${BOT_TOKEN}"}`);
    log.warn(new Error(`apps.connections.open failed for ${APP_TOKEN}`));
    log.error('request', {
      headers: { authorization: `Bearer ${BOT_TOKEN}` },
      url: `wss://x/?t=${APP_TOKEN}`,
    });
    log.info(encodeURIComponent(BOT_TOKEN));
    expect(lines).toHaveLength(4);
    for (const line of lines) {
      expect(line).not.toContain('notarealtoken');
      expect(line).not.toContain('notarealapptoken');
    }
    expect(lines.join('\n')).toContain('[redacted]');
  });

  it('never writes the bot token while the Web API client logs its requests at debug', async () => {
    slack = await startSlackStandIn({ botToken: BOT_TOKEN });
    const { logger, lines, parsed } = logged('debug');
    const client = new WebClient(BOT_TOKEN, {
      slackApiUrl: slack.apiUrl,
      retryConfig: { retries: 0 },
      logger: slackLogger(logger, 'web-api', 'debug'),
    });
    await client.chat.postMessage({ channel: 'C0DOCS', text: 'hello', token: BOT_TOKEN });
    expect(parsed().some((line) => String(line.msg).startsWith('http request headers'))).toBe(true);
    expect(parsed().every((line) => line.component === 'web-api')).toBe(true);
    expect(lines.join('\n')).not.toContain('notarealtoken');
  });

  it('reports the app’s level, and leaves filtering to the app’s logger whatever it is set to', () => {
    const { logger, parsed } = logged('info');
    const log = slackLogger(logger, 'bolt', 'info');
    expect(log.getLevel()).toBe(LogLevel.INFO);
    log.setLevel(LogLevel.DEBUG);
    expect(log.getLevel()).toBe(LogLevel.DEBUG);
    log.debug('still dropped');
    log.setLevel(LogLevel.ERROR);
    log.info('still written');
    log.setName('bolt-app');
    log.warn('named as before');
    expect(parsed().map(({ msg, component }) => [msg, component])).toEqual([
      ['still written', 'bolt'],
      ['named as before', 'bolt'],
    ]);
  });

  it('maps each LOG_LEVEL to the libraries’ level', () => {
    expect((['debug', 'info', 'warn', 'error'] as const).map(slackLogLevel)).toEqual([
      LogLevel.DEBUG,
      LogLevel.INFO,
      LogLevel.WARN,
      LogLevel.ERROR,
    ]);
    expect(slackLogger(logged('warn').logger, 'bolt', 'warn').getLevel()).toBe(LogLevel.WARN);
  });
});
