import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type AgentStandIn, startAgentStandIn } from './helpers/agent-stand-in.js';
import { tempDatabase, testEnv } from './helpers/harness.js';
import { rawRequest, STRAY_REQUESTS, waitFor } from './helpers/http.js';
import { slashCommand } from './helpers/payloads.js';
import { procfileArgs } from './helpers/procfile.js';
import { AWKWARD, leaks } from './helpers/secrets.js';
import { postSigned } from './helpers/signing.js';
import { type SlackStandIn, startSlackStandIn } from './helpers/slack-stand-in.js';
import { APP_TOKEN, startSocketModeStandIn } from './helpers/socket-mode-stand-in.js';

const SECRETS = ['xoxb-test-token', 'test-signing-secret-0000', 'mint_test_key'];

interface Running {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** Starts the built app the way the Procfile does, in a directory of its own. */
function run(env: Record<string, string>, cwd = mkdtempSync(join(tmpdir(), 'docs-agent-cwd-'))): Running {
  let output = '';
  const child = spawn(process.execPath, procfileArgs('web'), {
    cwd,
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  child.stdout?.on('data', (d) => (output += d));
  child.stderr?.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { child, output: () => output, exited };
}

const portOf = (output: string) => Number(output.match(/"msg":"docs-agent is ready"[^\n]*"port":(\d+)/)?.[1]);

let slack: SlackStandIn | undefined;
let agent: AgentStandIn | undefined;
let running: Running | undefined;
afterEach(async () => {
  running?.child.kill('SIGKILL');
  await slack?.close();
  await agent?.close();
});

describe('the built app as a process', () => {
  it('with no configuration exits 1 with one message naming every missing variable', async () => {
    running = run({});
    expect(await running.exited).toBe(1);
    const out = running.output();
    for (const name of [
      'SLACK_BOT_TOKEN',
      'SLACK_SIGNING_SECRET',
      'DOCS_AGENT_API_KEY',
      'DOCS_AGENT_PROJECT_ID',
    ]) {
      expect(out).toContain(name);
    }
    expect(out.match(/Invalid configuration/g)).toHaveLength(1);
  });

  it('reads a .env file, serves /healthz, runs a command end to end, and exits 0 on SIGTERM', async () => {
    slack = await startSlackStandIn();
    agent = await startAgentStandIn();
    const cwd = mkdtempSync(join(tmpdir(), 'docs-agent-cwd-'));
    const env = testEnv(slack, agent, tempDatabase(), { LOG_LEVEL: 'debug' });
    writeFileSync(
      join(cwd, '.env'),
      Object.entries(env)
        .map(([k, v]) => `${k}=${v}`)
        .join('\n'),
    );
    running = run({}, cwd);
    const port = await waitFor('ready line', () => portOf(running?.output() ?? ''), 10_000);
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);

    const res = await postSigned(`http://127.0.0.1:${port}`, slashCommand({ text: 'Document webhooks' }));
    expect(res.status).toBe(200);
    await waitFor('job created', () => agent?.requestsFor('create').length === 1);
    expect(agent.requestsFor('create')[0]?.body).toEqual({ prompt: 'Document webhooks' });
    await waitFor('root posted', () => slack?.messages.length);

    const stopAt = Date.now();
    running.child.kill('SIGTERM');
    expect(await running.exited).toBe(0);
    expect(Date.now() - stopAt).toBeLessThan(10_000);
    const out = running.output();
    expect(out).toContain('"msg":"stopped"');
    for (const secret of SECRETS) expect(out).not.toContain(secret);
  });

  it('a SIGTERM while it is still starting stops it cleanly once started: exit 0, not killed by the signal', async () => {
    slack = await startSlackStandIn();
    agent = await startAgentStandIn();
    running = run(testEnv(slack, agent, tempDatabase()));
    // Logged while the store is open and before the app is ready (the warm-up runs in between).
    await waitFor('starting', () => running?.output().includes('"msg":"instance joined"'), 10_000);
    const startedBeforeSignal = running.output().includes('docs-agent is ready');
    running.child.kill('SIGTERM');
    expect(await running.exited).toBe(0);
    const out = running.output();
    expect(out).toContain('"msg":"signal received"');
    expect(out).toContain('"msg":"stopped"');
    // The signal came while starting (else this case proves nothing about it).
    expect(startedBeforeSignal).toBe(false);
  });
});

describe('the built app in Socket Mode', () => {
  it('exits 1 through its normal stop when Slack refuses the app token on a reconnect, naming SLACK_APP_TOKEN', async () => {
    const socket = await startSocketModeStandIn();
    slack = await startSlackStandIn({ socketModeUrl: socket.url, appToken: APP_TOKEN });
    agent = await startAgentStandIn();
    try {
      running = run(
        testEnv(slack, agent, tempDatabase(), {
          SLACK_APP_TOKEN: APP_TOKEN,
          SLACK_SIGNING_SECRET: '',
          LOG_LEVEL: 'info',
        }),
      );
      await waitFor('ready line', () => portOf(running?.output() ?? ''), 10_000);
      slack.fail('apps.connections.open', { error: 'token_revoked' });
      socket.drop();
      expect(await running.exited).toBe(1);
      const out = running.output();
      expect(out).toContain('"msg":"Slack refused SLACK_APP_TOKEN; stopping"');
      expect(out).toContain('Slack refused SLACK_APP_TOKEN (token_revoked)');
      expect(out).toContain('"msg":"stopped"');
      expect(out).not.toContain(APP_TOKEN);
    } finally {
      await socket.close();
    }
  });
});

describe('requests the app does not serve', () => {
  it('are answered 404 or 405 without ending the process, a stack trace or a request dump', async () => {
    slack = await startSlackStandIn();
    agent = await startAgentStandIn();
    running = run(testEnv(slack, agent, tempDatabase(), { LOG_LEVEL: 'debug' }));
    const port = await waitFor('ready line', () => portOf(running?.output() ?? ''), 10_000);

    for (const stray of STRAY_REQUESTS) {
      const res = await rawRequest(port, stray);
      expect(res.status, `${stray.method} ${stray.path}`).toBe(stray.expect);
    }
    const unsignedForm = (body: string) =>
      rawRequest(port, {
        method: 'POST',
        path: '/slack/events',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
      });
    // Slack's unsigned certificate check is answered as Slack expects.
    const sslCheck = await unsignedForm('ssl_check=1&token=legacy-verification-token');
    expect(sslCheck.status).toBe(200);
    // Any other unsigned body is refused.
    const unsigned = await unsignedForm('command=%2Fdocs-agent&text=hello');
    expect(unsigned.status).toBe(401);

    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    const res = await postSigned(`http://127.0.0.1:${port}`, slashCommand({ text: 'Document webhooks' }));
    expect(res.status).toBe(200);
    await waitFor('job created', () => agent?.requestsFor('create').length === 1);
    expect(running.child.exitCode).toBeNull();
    const out = running.output();
    expect(out).not.toMatch(/DeferredRequestError|IncomingMessage|\n\s+at /);
    expect(out).not.toContain('wp-admin');
  });
});

describe('what the process writes', () => {
  const awkwardEnv = {
    SLACK_BOT_TOKEN: AWKWARD.botToken,
    SLACK_SIGNING_SECRET: AWKWARD.signingSecret,
    DOCS_AGENT_API_KEY: AWKWARD.apiKey,
    DOCS_AGENT_PROJECT_ID: 'proj_test',
    PORT: '0',
  };
  const password = encodeURIComponent(AWKWARD.dbPassword);

  it('a start-up failure names the cause and no secret, in any written form', async () => {
    running = run({
      ...awkwardEnv,
      DATABASE_URL: `postgres://bot:${password}@127.0.0.1:1/docs?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem`,
    });
    expect(await running.exited).toBe(1);
    expect(running.output()).toContain(
      'docs-agent failed to start: DatabaseTlsError: sslrootcert: cannot read',
    );
    expect(leaks(running.output().split('\n'), AWKWARD)).toEqual([]);

    // A password written unencoded, which no URL parser reads: a configuration problem.
    running = run({ ...awkwardEnv, DATABASE_URL: `postgres://bot:${AWKWARD.dbPassword}#x@127.0.0.1:1/docs` });
    expect(await running.exited).toBe(1);
    expect(running.output()).toContain('DATABASE_URL is not a valid URL');
    expect(leaks(running.output().split('\n'), AWKWARD)).toEqual([]);
  });

  it('is JSON lines from the app logger only: the Slack libraries write nothing of their own', async () => {
    slack = await startSlackStandIn();
    agent = await startAgentStandIn();
    // A warning Slack attaches to an answer, which the Web API client logs.
    slack.fail('auth.test', { warning: 'superfluous_charset' });
    running = run(testEnv(slack, agent, tempDatabase(), { LOG_LEVEL: 'debug' }));
    const port = await waitFor('ready line', () => portOf(running?.output() ?? ''), 10_000);
    const res = await postSigned(`http://127.0.0.1:${port}`, slashCommand({ text: 'Document webhooks' }));
    expect(res.status).toBe(200);
    await waitFor('root posted', () => slack?.messages.length);
    running.child.kill('SIGTERM');
    expect(await running.exited).toBe(0);

    const lines = running.output().split('\n').filter(Boolean);
    const notOurs = lines.filter((line) => {
      try {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        return typeof parsed.time !== 'string' || typeof parsed.level !== 'string';
      } catch {
        return true;
      }
    });
    expect(notOurs).toEqual([]);
    expect(lines.some((l) => l.includes('"component":"web-api"') && l.includes('superfluous_charset'))).toBe(
      true,
    );
  });
});
