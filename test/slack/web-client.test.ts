import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebClient } from '@slack/web-api';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';
import { slackClientOptions } from '../../src/slack/client-options.js';
import { BotWebClient } from '../../src/slack/web-client.js';

const BOT_TOKEN = 'xoxb-0-0-notarealbottoken';
const STEP_TOKEN = 'xwfp-0-notarealsteptoken';

interface Received {
  method: string | undefined;
  path: string | undefined;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A loopback Slack answering every call with `answer`, recording each request as it came. */
async function fakeSlack(answer: (res: ServerResponse) => void) {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      received.push({ method: req.method, path: req.url, headers: req.headers, body });
      answer(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return { url, received, close };
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}) =>
  (res: ServerResponse) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };

/** Slack's own client and the bot's, made from the app's options, logging into `lines`. */
function clients(apiUrl: string, timeout?: number) {
  const lines: string[] = [];
  const logger = createLogger({ level: 'warn', secrets: [BOT_TOKEN], write: (line) => lines.push(line) });
  const config = {
    slack: { botToken: BOT_TOKEN, signingSecret: undefined, appToken: undefined, apiUrl: `${apiUrl}/api/` },
    logLevel: 'warn' as const,
  };
  const options = { ...slackClientOptions(config, logger, 'web-api'), ...(timeout ? { timeout } : {}) };
  return { lines, web: new WebClient(BOT_TOKEN, options), bot: new BotWebClient(BOT_TOKEN, options) };
}

/** What a request carried that a client decides: the line, headers but the connection's, and the body. */
const asSent = ({ headers, ...rest }: Received) => {
  const { host: _host, connection: _connection, ...own } = headers;
  return { ...rest, headers: own };
};

/** An error as callers read it: its class, code, and what Slack said. */
const asThrown = (error: unknown) => {
  const e = error as Record<string, unknown> & Error;
  return {
    class: e.constructor.name,
    code: e.code,
    retryAfter: e.retryAfter,
    statusCode: e.statusCode,
    body: e.body,
    data: e.data,
    original: e.original instanceof Error,
  };
};

describe('the bot’s Web API client', () => {
  let slack: Awaited<ReturnType<typeof fakeSlack>> | undefined;
  afterEach(async () => {
    await slack?.close();
    slack = undefined;
  });

  const card = {
    channel: 'C0DOCS',
    ts: '1700000000.000100',
    text: 'Working on: *the* "flow" & more <https://example.test|link> é',
    blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'Working on it' } }],
    metadata: { event_type: 'docs_agent_card', event_payload: { job_id: 7 } },
    unfurl_links: false,
    reply_broadcast: undefined,
    thread_ts: null,
    limit: 3,
  };

  it('sends a call as Slack’s own client does: same line, headers and form', async () => {
    slack = await fakeSlack(json(200, { ok: true, ts: '1700000000.000100' }));
    const { web, bot } = clients(slack.url);
    await web.chat.update(card as never);
    await bot.chat.update(card as never);
    const [theirs, ours] = slack.received.map(asSent);
    expect(ours).toEqual(theirs);
    expect(ours?.path).toBe('/api/chat.update');
    expect(ours?.headers.authorization).toBe(`Bearer ${BOT_TOKEN}`);
    expect(new URLSearchParams(ours?.body).get('blocks')).toBe(JSON.stringify(card.blocks));
  });

  it('sends a call’s own token as Slack’s own client does', async () => {
    slack = await fakeSlack(json(200, { ok: true }));
    const { web, bot } = clients(slack.url);
    const answer = { token: STEP_TOKEN, function_execution_id: 'Fx0STEP', outputs: { ok: true } };
    await web.functions.completeSuccess(answer);
    await bot.functions.completeSuccess(answer);
    const [theirs, ours] = slack.received.map(asSent);
    expect(ours).toEqual(theirs);
    expect(ours?.headers.authorization).toBe(`Bearer ${STEP_TOKEN}`);
  });

  it('answers as Slack’s own client does, with the scopes Slack’s headers name', async () => {
    const answer = { ok: true, channel: 'C0DOCS', ts: '1700000000.000200', message: { text: 'hi' } };
    slack = await fakeSlack(json(200, answer, { 'x-oauth-scopes': 'chat:write, commands' }));
    const { web, bot } = clients(slack.url);
    const theirs = await web.chat.postMessage({ channel: 'C0DOCS', text: 'hi' });
    const ours = await bot.chat.postMessage({ channel: 'C0DOCS', text: 'hi' });
    expect(ours).toEqual(theirs);
    expect(ours.response_metadata?.scopes).toEqual(['chat:write', 'commands']);
  });

  const refusals: [string, (res: ServerResponse) => void][] = [
    ['a refusal', json(200, { ok: false, error: 'channel_not_found' })],
    ['a rate limit', json(429, { ok: false, error: 'ratelimited' }, { 'retry-after': '30' })],
    ['a rate limit without a valid Retry-After', json(429, { ok: false }, { 'retry-after': 'soon' })],
    ['an outage', json(503, { ok: false, error: 'service_unavailable' })],
    [
      'an answer that is not JSON',
      (res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html>maintenance</html>');
      },
    ],
    ['JSON that is not an object', json(200, null)],
    [
      'a redirect',
      (res) => {
        res.writeHead(302, { location: 'https://elsewhere.example.test/' });
        res.end();
      },
    ],
  ];

  it.each(refusals)('fails on %s as Slack’s own client does', async (what, answer) => {
    slack = await fakeSlack(answer);
    const { web, bot } = clients(slack.url);
    const theirs = await web.chat.postMessage({ channel: 'C0DOCS', text: 'hi' }).then(
      () => 'answered',
      (error: unknown) => error,
    );
    const ours = await bot.chat.postMessage({ channel: 'C0DOCS', text: 'hi' }).then(
      () => 'answered',
      (error: unknown) => error,
    );
    expect(ours).not.toBe('answered');
    expect(asThrown(ours)).toEqual(asThrown(theirs));
    if (what === 'a rate limit without a valid Retry-After')
      expect((ours as Error).message).toBe((theirs as Error).message);
    // Each call was made once: no retry.
    expect(slack.received).toHaveLength(2);
  });

  it('fails a call Slack does not answer in time, and one that finds no Slack, as a request error', async () => {
    slack = await fakeSlack(() => undefined);
    const { web, bot } = clients(slack.url, 100);
    const slow = [web, bot].map((client) =>
      client.auth.test().then(
        () => 'answered',
        (error: unknown) => asThrown(error),
      ),
    );
    const [theirs, ours] = await Promise.all(slow);
    expect(ours).toEqual(theirs);
    expect(ours).toMatchObject({ class: 'WebAPIRequestError', original: true });
    const gone = clients('http://127.0.0.1:1');
    const refused = await gone.bot.auth.test().catch((error: unknown) => asThrown(error));
    expect(refused).toMatchObject({ class: 'WebAPIRequestError', original: true });
    expect(gone.lines.join('\n')).toContain('http request failed');
  });

  it('logs Slack’s warnings through the app’s logger, secrets masked', async () => {
    slack = await fakeSlack(
      json(200, {
        ok: true,
        response_metadata: {
          warnings: [`superfluous_charset (token ${BOT_TOKEN})`],
          messages: ['[WARN] a field is deprecated', '[ERROR] a field is invalid', 'said plainly'],
        },
      }),
    );
    const { bot, lines } = clients(slack.url);
    await bot.auth.test();
    const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logged.map(({ level, msg }) => ({ level, msg }))).toEqual([
      { level: 'warn', msg: 'superfluous_charset (token [redacted])' },
      { level: 'warn', msg: 'a field is deprecated' },
      { level: 'error', msg: 'a field is invalid' },
    ]);
  });

  it('leaves every call to Slack’s own client when made otherwise than the app makes it', async () => {
    slack = await fakeSlack(json(200, { ok: true }));
    const { bot } = clients(slack.url);
    const logger = createLogger({ level: 'warn', secrets: [BOT_TOKEN], write: () => undefined });
    const config = {
      slack: {
        botToken: BOT_TOKEN,
        signingSecret: undefined,
        appToken: undefined,
        apiUrl: `${slack.url}/api/`,
      },
      logLevel: 'warn' as const,
    };
    const fetched: string[] = [];
    const spy: typeof fetch = (input, init) => {
      fetched.push(String(input));
      return fetch(input, init);
    };
    const options = { ...slackClientOptions(config, logger, 'web-api'), fetch: spy };
    await new BotWebClient(BOT_TOKEN, options).auth.test();
    expect(fetched).toEqual([]);
    await new BotWebClient(BOT_TOKEN, { ...options, retryConfig: { retries: 2 } }).auth.test();
    await new BotWebClient(BOT_TOKEN, { ...options, rejectRateLimitedCalls: false }).auth.test();
    expect(fetched).toEqual([`${slack.url}/api/auth.test`, `${slack.url}/api/auth.test`]);
    await bot.auth.test();
    expect(slack.received).toHaveLength(4);
  });

  it('leaves a file’s upload and a call to a full URL to Slack’s own client', async () => {
    slack = await fakeSlack(json(200, { ok: true }));
    const { bot } = clients(slack.url);
    await bot.apiCall(`${slack.url}/elsewhere/custom.method`, { text: 'hi' });
    await bot.apiCall('files.upload', { file: Buffer.from('a file') });
    expect(slack.received.map((r) => r.path)).toEqual(['/elsewhere/custom.method', '/api/files.upload']);
    expect(slack.received[1]?.headers['content-type']).toMatch(/^multipart\/form-data/);
  });
});
