import { describe, expect, it } from 'vitest';
import {
  projectForChannel,
  projectOfRecord,
  readConfig,
  secretsOf,
  servedProjects,
  servesProject,
} from '../../src/config/config.js';
import { problemsOf, VALID_ENV } from '../helpers/config.js';
import { AWKWARD } from '../helpers/secrets.js';

const valid = VALID_ENV;

describe('readConfig', () => {
  it('applies the documented defaults', () => {
    const config = readConfig(valid);
    expect(config.slack.apiUrl).toBe('https://slack.com/api/');
    expect(config.agent.apiUrl).toBe('https://api.mintlify.com');
    expect(config.databasePath).toBe('./data/docs-agent.sqlite');
    expect(config.port).toBe(3000);
    expect(config.poll.intervalMs).toBe(10_000);
    expect(config.poll.maxAgeMs).toBe(24 * 3_600_000);
    expect(config.logLevel).toBe('info');
    expect(config.slack.appToken).toBeUndefined();
    expect(config.databaseUrl).toBeUndefined();
    expect(config.instanceTimeoutMs).toBe(30_000);
    expect(config.poll).toEqual({
      intervalMs: 10_000,
      backoffAfterMs: 600_000,
      maxIntervalMs: 300_000,
      maxRps: 10,
      maxAgeMs: 24 * 3_600_000,
      concurrency: 8,
    });
    expect(readConfig({ ...valid, POLL_MAX_RPS: '300' }).poll.concurrency).toBe(150);
    expect(readConfig({ ...valid, POLL_MAX_RPS: '300', POLL_CONCURRENCY: '20' }).poll.concurrency).toBe(20);
  });

  it('reads the store settings, and refuses an instance time-out too short to heartbeat within', () => {
    const config = readConfig({
      ...valid,
      DATABASE_URL: 'postgres://bot@db.example.com/docs?sslmode=require',
      INSTANCE_TIMEOUT_MS: '10000',
    });
    expect(config.databaseUrl).toBe('postgres://bot@db.example.com/docs?sslmode=require');
    expect(config.instanceTimeoutMs).toBe(10_000);
    expect(secretsOf(config)).not.toContain('');
    const withPassword = readConfig({
      ...valid,
      DATABASE_URL: 'postgres://bot:s3cr%40t@db.example.com/docs',
    });
    expect(secretsOf(withPassword)).toEqual(expect.arrayContaining(['s3cr%40t', 's3cr@t']));
    expect(problemsOf({ ...valid, INSTANCE_TIMEOUT_MS: '100' })).toEqual([
      'INSTANCE_TIMEOUT_MS must be at least 500 (milliseconds)',
    ]);
    expect(problemsOf({ ...valid, DATABASE_URL: 'mysql://db/docs' })).toEqual([
      'DATABASE_URL must be a postgres:// URL',
    ]);
  });

  it('reads RETENTION_DAYS: 90 by default, 0 keeps data forever, anything but a whole number of days is refused', () => {
    expect(readConfig(valid).retentionDays).toBe(90);
    expect(readConfig({ ...valid, RETENTION_DAYS: '30' }).retentionDays).toBe(30);
    expect(readConfig({ ...valid, RETENTION_DAYS: '0' }).retentionDays).toBe(0);
    expect(readConfig({ ...valid, RETENTION_DAYS: ' ' }).retentionDays).toBe(90);
    for (const bad of ['-1', '1.5', 'ninety']) {
      expect(problemsOf({ ...valid, RETENTION_DAYS: bad })).toEqual([
        expect.stringMatching(
          /^RETENTION_DAYS must be (a whole number|at least 0) \(days; 0 keeps data forever\)$/,
        ),
      ]);
    }
  });

  it('reads every variable of the contract', () => {
    const config = readConfig({
      ...valid,
      SLACK_APP_TOKEN: 'xapp-test',
      SLACK_API_URL: 'http://127.0.0.1:9/api',
      DOCS_AGENT_API_URL: 'http://127.0.0.1:8/',
      DATABASE_PATH: '/tmp/x.sqlite',
      PORT: '8080',
      POLL_INTERVAL_MS: '2500',
      LOG_LEVEL: 'DEBUG',
    });
    expect(config.slack.appToken).toBe('xapp-test');
    expect(config.slack.apiUrl).toBe('http://127.0.0.1:9/api/');
    expect(config.agent.apiUrl).toBe('http://127.0.0.1:8');
    expect(config.databasePath).toBe('/tmp/x.sqlite');
    expect(config.port).toBe(8080);
    expect(config.poll.intervalMs).toBe(2500);
    expect(config.logLevel).toBe('debug');
  });

  it('reads GITHUB_TOKEN and GITHUB_API_URL: nothing followed by default, the token masked and never echoed', () => {
    expect(readConfig(valid).github).toEqual({
      token: undefined,
      apiUrl: 'https://api.github.com',
      checkEveryMs: undefined,
    });
    const token = `github_pat_11${'A'.repeat(30)}`;
    const config = readConfig({
      ...valid,
      GITHUB_TOKEN: token,
      GITHUB_API_URL: 'https://ghe.example.com/api/v3/',
      GITHUB_CHECK_EVERY_MS: '5000',
    });
    expect(config.github).toEqual({ token, apiUrl: 'https://ghe.example.com/api/v3', checkEveryMs: 5000 });
    expect(secretsOf(config)).toContain(token);
    const problems = problemsOf({
      ...valid,
      GITHUB_TOKEN: 'not a token; Q7tok',
      GITHUB_API_URL: 'http://ghe.example.com',
      GITHUB_CHECK_EVERY_MS: '5',
    });
    expect(problems.join('\n')).toMatch(/GITHUB_TOKEN must be a GitHub token/);
    expect(problems.join('\n')).toMatch(/GITHUB_API_URL must use https/);
    expect(problems.join('\n')).toMatch(/GITHUB_CHECK_EVERY_MS must be at least 10/);
    expect(problems.join('\n')).not.toContain('Q7tok');
  });

  it('names every missing required variable at once', () => {
    const problems = problemsOf({});
    expect(problems.join('\n')).toMatch(/SLACK_BOT_TOKEN is required/);
    expect(problems.join('\n')).toMatch(/DOCS_AGENT_API_KEY is required/);
    expect(problems.join('\n')).toMatch(/DOCS_AGENT_PROJECT_ID is required/);
    expect(problems.join('\n')).toMatch(/SLACK_SIGNING_SECRET is required in HTTP mode/);
    expect(problems).toHaveLength(4);
  });

  it('does not need a signing secret in Socket Mode', () => {
    expect(
      readConfig({ ...valid, SLACK_SIGNING_SECRET: undefined, SLACK_APP_TOKEN: 'xapp-test' }).slack
        .signingSecret,
    ).toBeUndefined();
  });

  it('names every malformed variable without echoing secret values', () => {
    const problems = problemsOf({
      ...valid,
      SLACK_BOT_TOKEN: 'xoxp-user-token-value',
      DOCS_AGENT_API_KEY: 'sk_wrong_key_value',
      SLACK_APP_TOKEN: 'app-token-value',
      PORT: 'eighty',
      POLL_INTERVAL_MS: '-5',
      LOG_LEVEL: 'loud',
      SLACK_API_URL: 'not a url',
    });
    const text = problems.join('\n');
    for (const name of [
      'SLACK_BOT_TOKEN',
      'DOCS_AGENT_API_KEY',
      'SLACK_APP_TOKEN',
      'PORT',
      'POLL_INTERVAL_MS',
      'LOG_LEVEL',
      'SLACK_API_URL',
    ]) {
      expect(text).toContain(name);
    }
    expect(problems).toHaveLength(7);
    for (const secret of ['xoxp-user-token-value', 'sk_wrong_key_value', 'app-token-value'])
      expect(text).not.toContain(secret);
  });

  it('reads follow-up mode, aside marker, batch window, thread context bound and channel projects', () => {
    const defaults = readConfig(valid);
    expect(defaults.followUps).toEqual({ mode: 'all', asideMarker: '//', batchMs: 3_000 });
    expect(defaults.threadContextMaxChars).toBe(4_000);
    expect(defaults.channelProjects.size).toBe(0);

    const set = readConfig({
      ...valid,
      FOLLOW_UP_MODE: ' Mention ',
      ASIDE_MARKER: '',
      FOLLOW_UP_BATCH_MS: '0',
      THREAD_CONTEXT_MAX_CHARS: '500',
      CHANNEL_PROJECTS: 'C0API:api-docs, C0SDK : sdk.docs',
    });
    expect(set.followUps).toEqual({ mode: 'mention', asideMarker: '', batchMs: 0 });
    expect(set.threadContextMaxChars).toBe(500);
    expect([...set.channelProjects]).toEqual([
      ['C0API', 'api-docs'],
      ['C0SDK', 'sdk.docs'],
    ]);
  });

  it('names a bad follow-up mode, batch window or channel project mapping', () => {
    const problems = problemsOf({
      ...valid,
      FOLLOW_UP_MODE: 'some',
      FOLLOW_UP_BATCH_MS: '120000',
      CHANNEL_PROJECTS: 'C0API=api-docs',
      ASIDE_MARKER: 'this is far too long',
    });
    expect(problems).toEqual([
      'FOLLOW_UP_MODE must be all or mention',
      'ASIDE_MARKER must be at most 10 characters (or empty to turn asides off)',
      'FOLLOW_UP_BATCH_MS must be at most 60000 (milliseconds)',
      'CHANNEL_PROJECTS must be comma-separated channel:project pairs, such as C0123ABCD:docs-site',
    ]);
    expect(problemsOf({ ...valid, CHANNEL_PROJECTS: 'C0A:x,C0A:y' })).toEqual([
      'CHANNEL_PROJECTS lists a channel twice',
    ]);
  });

  it('reads who a workflow may name in "On behalf of": nobody unless listed, and only people', () => {
    expect(readConfig(valid).workflowOnBehalfOf).toEqual(new Set());
    expect(
      readConfig({ ...valid, WORKFLOW_ON_BEHALF_OF_USER_IDS: 'U0SERVICE, W0GRIDSERVICE' }).workflowOnBehalfOf,
    ).toEqual(new Set(['U0SERVICE', 'W0GRIDSERVICE']));
    expect(problemsOf({ ...valid, WORKFLOW_ON_BEHALF_OF_USER_IDS: 'U0SERVICE,C0DOCS' })).toEqual([
      'WORKFLOW_ON_BEHALF_OF_USER_IDS must be a comma-separated list of user ids such as U0123ABCD (or W0123ABCD in Enterprise Grid)',
    ]);
  });

  it('treats blank values as unset', () => {
    expect(problemsOf({ ...valid, SLACK_BOT_TOKEN: '  ' })).toEqual([
      expect.stringMatching(/^SLACK_BOT_TOKEN is required/),
    ]);
  });
});

describe('service URLs', () => {
  it('take https anywhere, and plain http only to a loopback address', () => {
    for (const url of [
      'https://slack.example.com/api/',
      'http://localhost:3000/api',
      'http://127.0.0.1:9/',
      'http://127.8.9.10/',
      'http://[::1]:8080/',
    ]) {
      const config = readConfig({ ...valid, SLACK_API_URL: url, DOCS_AGENT_API_URL: url });
      expect(config.slack.apiUrl.startsWith(url.replace(/\/$/, ''))).toBe(true);
    }
  });

  it('refuse plain http elsewhere, naming the variable and why', () => {
    for (const url of [
      'http://slack.example.com/api/',
      'http://10.0.0.5/',
      'http://localhost.example.com/',
      'http://128.0.0.1/',
      'http://[::2]/',
    ]) {
      const problems = problemsOf({ ...valid, SLACK_API_URL: url, DOCS_AGENT_API_URL: url });
      expect(problems).toHaveLength(2);
      expect(problems[0]).toMatch(/^SLACK_API_URL must use https: .*loopback/);
      expect(problems[1]).toMatch(/^DOCS_AGENT_API_URL must use https: .*loopback/);
    }
    expect(problemsOf({ ...valid, DOCS_AGENT_API_URL: 'ftp://127.0.0.1/' })).toEqual([
      'DOCS_AGENT_API_URL must be an http(s) URL',
    ]);
  });
});

describe('DATABASE_URL TLS parameters', () => {
  it('accepts every libpq sslmode and refuses any other, naming the variable', () => {
    for (const mode of ['disable', 'allow', 'prefer', 'require', 'verify-full']) {
      expect(
        readConfig({ ...valid, DATABASE_URL: `postgres://u@db.example.com/d?sslmode=${mode}` }),
      ).toBeTruthy();
    }
    expect(
      problemsOf({ ...valid, DATABASE_URL: 'postgres://u@db.example.com/d?sslmode=verify_full' }),
    ).toEqual([
      'DATABASE_URL sslmode "verify_full" is not one of disable, allow, prefer, require, verify-ca, verify-full',
    ]);
    expect(problemsOf({ ...valid, DATABASE_URL: 'postgres://u@db.example.com/d?sslmode=verify-ca' })).toEqual(
      [expect.stringMatching(/^DATABASE_URL sslmode=verify-ca needs sslrootcert/)],
    );
  });

  it('never quotes the URL or its password in a problem', () => {
    const password = encodeURIComponent(AWKWARD.dbPassword);
    const problems = problemsOf({
      ...valid,
      DATABASE_URL: `postgres://bot:${password}@db.example.com/d?sslmode=on&ssl=true`,
    });
    expect(problems).toEqual([
      expect.stringMatching(/^DATABASE_URL parameter ssl is pg-specific; use sslmode/),
    ]);
    const text = problems.join('\n');
    for (const leak of [password, AWKWARD.dbPassword, 'db.example.com']) expect(text).not.toContain(leak);
  });
});

const settings = {
  agent: { projectId: 'docs' },
  channelProjects: new Map([
    ['C0SDK', 'sdk-docs'],
    ['C0API', 'api-docs'],
    ['C0SDK2', 'sdk-docs'],
  ]),
};

describe('which documentation project serves where', () => {
  it("runs a job in its channel's project, else in the deployment's", () => {
    expect(projectForChannel(settings, 'C0SDK')).toBe('sdk-docs');
    expect(projectForChannel(settings, 'C0OTHER')).toBe('docs');
  });

  it('lists every project served once, the default first', () => {
    expect(servedProjects(settings)).toEqual(['docs', 'sdk-docs', 'api-docs']);
    expect(
      servedProjects({ agent: { projectId: 'docs' }, channelProjects: new Map([['C0A', 'docs']]) }),
    ).toEqual(['docs']);
  });

  it('serves the default and the channels’ projects, nothing else', () => {
    expect(servesProject(settings, 'docs')).toBe(true);
    expect(servesProject(settings, 'api-docs')).toBe(true);
    expect(servesProject(settings, 'other-docs')).toBe(false);
  });

  it('counts a record without a project as the default', () => {
    expect(projectOfRecord(null, 'docs')).toBe('docs');
    expect(projectOfRecord(undefined, 'docs')).toBe('docs');
    expect(projectOfRecord('sdk-docs', 'docs')).toBe('sdk-docs');
  });
});
