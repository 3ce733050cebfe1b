import { afterEach, describe, expect, it, vi } from 'vitest';
import { type RunningApp, startApp } from '../../src/app.js';
import { readConfig, secretsOf } from '../../src/config/config.js';
import { createLogger } from '../../src/logging/logger.js';
import { type AgentStandIn, startAgentStandIn } from '../helpers/agent-stand-in.js';
import { type Harness, startHarness, tempDatabase, testEnv } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import { socketSlashCommand } from '../helpers/payloads.js';
import { freshSchemaUrl, postgresAvailable } from '../helpers/postgres.js';
import { AWKWARD, leaks } from '../helpers/secrets.js';
import { type SlackStandIn, startSlackStandIn } from '../helpers/slack-stand-in.js';
import { startSocketModeStandIn } from '../helpers/socket-mode-stand-in.js';

const server = await postgresAvailable();

/** Whatever reaches the console or the process's streams without going through the app's logger. */
function captureConsole() {
  const written: string[] = [];
  const spies = [
    ...(['log', 'info', 'warn', 'error', 'debug', 'trace'] as const).map((method) =>
      vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
        written.push(args.map(String).join(' '));
      }),
    ),
    ...[process.stdout, process.stderr].map((stream) =>
      vi.spyOn(stream, 'write').mockImplementation((chunk: unknown) => {
        written.push(String(chunk));
        return true;
      }),
    ),
  ];
  const restore = () => {
    for (const spy of spies) spy.mockRestore();
  };
  return { written, restore };
}

let capture: ReturnType<typeof captureConsole> | undefined;
let h: Harness | undefined;
const stops: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  capture?.restore();
  capture = undefined;
  await h?.stop();
  h = undefined;
  for (const stop of stops.splice(0)) await stop();
});

/** A PostgreSQL URL whose password holds every awkward character (the test server trusts loopback). */
async function databaseUrlWithPassword(): Promise<string> {
  const url = new URL(await freshSchemaUrl());
  url.username = 'postgres';
  url.password = encodeURIComponent(AWKWARD.dbPassword);
  return url.toString();
}

describe('secrets in a full run', () => {
  it('no log line, console write or Slack call carries a secret in any written form', async () => {
    capture = captureConsole();
    const databaseUrl = server.ok ? await databaseUrlWithPassword() : undefined;
    h = await startHarness({
      SLACK_BOT_TOKEN: AWKWARD.botToken,
      SLACK_SIGNING_SECRET: AWKWARD.signingSecret,
      DOCS_AGENT_API_KEY: AWKWARD.apiKey,
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    });
    if (databaseUrl) expect(secretsOf(h.config)).toContain(AWKWARD.dbPassword);
    // Upstreams echoing a credential back are the worst case: Slack in a warning the Web API
    // client logs, the agent API in a 401 body.
    h.slack.fail('chat.postMessage', { warning: `superfluous_charset for ${AWKWARD.botToken}` });

    // Command, job, outcome.
    const { threadTs, jobId, channel } = await h.startJob({ text: 'Add a quickstart' });
    h.agent.complete(jobId, 'https://github.com/example/docs/pull/1');
    await waitFor('outcome', () => h?.slack.threadPosts(threadTs).length === 1);

    // A follow-up the agent API refuses with 401, and a Slack call whose connection drops.
    h.agent.fail('message', {
      status: 401,
      body: JSON.stringify({ error: `Invalid API key ${AWKWARD.apiKey}` }),
    });
    h.slack.fail('reactions.add', { acceptThenHang: true });
    await h.event({ channel, thread_ts: threadTs, user: 'U0BOB', text: 'and the CLI' });
    await waitFor('refusal explained', () => h?.slack.threadPosts(threadTs).length === 2);

    // A follow-up that goes through, and its outcome.
    await h.event({ channel, thread_ts: threadTs, user: 'U0BOB', text: 'and the CLI, please' });
    await waitFor('follow-up sent', () => h?.agent.requestsFor('message').length === 2);
    h.agent.complete(jobId, 'https://github.com/example/docs/pull/1');
    await waitFor('second outcome', () => h?.slack.threadPosts(threadTs).length === 3);

    // A command in a channel Slack refuses to post in.
    h.slack.fail('chat.postMessage', { error: 'not_in_channel' });
    await h.command({ channel_id: 'C0PRIVATE', response_url: h.slack.responseUrl('refused') });
    await waitFor('private reply', () => h?.slack.responses.length === 1);
    await h.app.stop();

    const logs = h.logs;
    expect(logs.length).toBeGreaterThan(50);
    for (const line of logs) expect(() => JSON.parse(line)).not.toThrow();
    // The Web API client's own lines went through the app's logger, not the console.
    const library = logs.filter((l) => l.includes('"component":"web-api"')).join('\n');
    expect(library).toContain('superfluous_charset for [redacted]');
    expect(library).toContain('http request failed');
    expect(capture.written).toEqual([]);

    const slackSide = [
      ...h.slack.calls.map((c) => JSON.stringify(c.args)),
      ...h.slack.responses.map((r) => JSON.stringify(r.body)),
    ];
    expect(leaks([...logs, ...capture.written, ...slackSide], AWKWARD)).toEqual([]);
  });
});

describe('secrets in Socket Mode', () => {
  it('the Socket Mode client and its Web API client log through the app logger, with no secret', async () => {
    capture = captureConsole();
    const socket = await startSocketModeStandIn();
    const slack: SlackStandIn = await startSlackStandIn({
      socketModeUrl: socket.url,
      appToken: AWKWARD.appToken,
      botToken: AWKWARD.botToken,
    });
    const agent: AgentStandIn = await startAgentStandIn({ apiKey: AWKWARD.apiKey });
    stops.push(socket.close, slack.close, agent.close);
    const config = readConfig(
      testEnv(slack, agent, tempDatabase(), {
        SLACK_APP_TOKEN: AWKWARD.appToken,
        SLACK_SIGNING_SECRET: '',
        SLACK_BOT_TOKEN: AWKWARD.botToken,
        DOCS_AGENT_API_KEY: AWKWARD.apiKey,
      }),
    );
    const logs: string[] = [];
    const app: RunningApp = await startApp(config, {
      logger: createLogger({ level: 'debug', secrets: secretsOf(config), write: (line) => logs.push(line) }),
    });
    stops.unshift(() => app.stop());
    await waitFor('socket connected', () => socket.connected());
    const envelope = socket.send('slash_commands', socketSlashCommand(slack.responseUrl('socket')));
    await waitFor('ack', () => socket.acks.has(envelope));
    await waitFor('job created', () => agent.requestsFor('create').length === 1);
    await app.stop();
    stops.shift();

    const socketLines = logs.filter((l) => l.includes('"component":"bolt"')).join('\n');
    expect(socketLines).toContain('apps.connections.open');
    expect(socketLines).toContain('Received a Socket Mode message (type slash_commands');
    expect(capture.written).toEqual([]);
    expect(leaks([...logs, ...capture.written], AWKWARD)).toEqual([]);
  });
});
