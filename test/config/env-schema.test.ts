import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SUGGESTED_PROMPTS,
  envSchema,
  MAX_METRICS_TOKEN_CHARS,
  MAX_SUGGESTED_PROMPTS,
  MIN_METRICS_TOKEN_CHARS,
} from '../../src/config/env-schema.js';
import { VALID_ENV } from '../helpers/config.js';

type Env = Record<string, string | undefined>;
type Parsed = ReturnType<typeof envSchema.parse>;

/** The environment as the schema reads it; fails when it has a problem. */
const parsed = (env: Env = {}): Parsed => envSchema.parse({ ...VALID_ENV, ...env });
/** Each problem of `env` as "VARIABLE message", in the schema's order. */
function problems(env: Env): string[] {
  const result = envSchema.safeParse({ ...VALID_ENV, ...env });
  if (result.success) throw new Error('expected a problem');
  return result.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`);
}
/** Everything a failed parse says, issues whole. */
const everythingSaid = (env: Env) => JSON.stringify(envSchema.safeParse({ ...VALID_ENV, ...env }).error);

describe('defaults', () => {
  it('are the documented ones', () => {
    const env = parsed();
    expect(env).toMatchObject({
      SLACK_API_URL: 'https://slack.com/api/',
      DOCS_AGENT_API_URL: 'https://api.mintlify.com',
      DOCS_AGENT_API_TIMEOUT_MS: 6_000,
      DATABASE_PATH: './data/docs-agent.sqlite',
      ALLOW_GUESTS: false,
      MAX_INSTRUCTIONS_PER_USER_PER_HOUR: 20,
      MAX_PROMPT_CHARS: 10_000,
      FOLLOW_UP_MODE: 'all',
      ASIDE_MARKER: '//',
      NOTIFY_ON: 'pr',
      NOTIFY_REQUESTER: 'thread',
      NOTIFY_PRIVATE_JOBS: 'outcome-only',
      PR_LINK_HOSTS: ['github.com'],
      RETENTION_DAYS: 90,
      LOG_LEVEL: 'info',
      CHANNEL_PROJECTS: [],
    });
    // Unset: direct messages follow ALLOWED_CHANNEL_IDS, decided when the configuration is read.
    expect(env.ALLOW_DIRECT_MESSAGES).toBeUndefined();
    expect(env.DATABASE_URL).toBeUndefined();
    expect(env.METRICS_TOKEN).toBeUndefined();
    expect(env.POLL_CONCURRENCY).toBeUndefined();
    expect(env.SUGGESTED_PROMPTS).toHaveLength(3);
  });

  it('apply to blank values, except where empty means "off"', () => {
    const env = parsed({
      LOG_LEVEL: '  ',
      NOTIFY_ON: '',
      PR_LINK_HOSTS: ' ',
      ASIDE_MARKER: '  ',
      SUGGESTED_PROMPTS: '',
    });
    expect(env.LOG_LEVEL).toBe('info');
    expect(env.NOTIFY_ON).toBe('pr');
    expect(env.PR_LINK_HOSTS).toEqual(['github.com']);
    expect(env.ASIDE_MARKER).toBe('');
    expect(env.SUGGESTED_PROMPTS).toEqual([]);
  });
});

describe('switches and choices', () => {
  it('read yes/no in any case, and refuse anything else', () => {
    for (const [value, on] of [
      ['TRUE', true],
      [' yes ', true],
      ['1', true],
      ['No', false],
      ['0', false],
    ] as const) {
      expect(parsed({ ALLOW_GUESTS: value }).ALLOW_GUESTS, value).toBe(on);
      expect(parsed({ ALLOW_DIRECT_MESSAGES: value }).ALLOW_DIRECT_MESSAGES, value).toBe(on);
    }
    expect(parsed({ ALLOW_GUESTS: 'false' }).ALLOW_GUESTS).toBe(false);
    expect(parsed({ ALLOW_DIRECT_MESSAGES: ' ' }).ALLOW_DIRECT_MESSAGES).toBeUndefined();
    expect(problems({ ALLOW_GUESTS: 'maybe', ALLOW_DIRECT_MESSAGES: 'on' })).toEqual([
      'ALLOW_GUESTS must be true or false',
      'ALLOW_DIRECT_MESSAGES must be true or false',
    ]);
  });

  it('read their words in any case, and name the words they take', () => {
    expect(parsed({ NOTIFY_PRIVATE_JOBS: ' Quote ', FOLLOW_UP_MODE: ' MENTION ' })).toMatchObject({
      NOTIFY_PRIVATE_JOBS: 'quote',
      FOLLOW_UP_MODE: 'mention',
    });
    expect(
      parsed({ NOTIFY_REQUESTER: 'thread', NOTIFY_PRIVATE_JOBS: 'outcome-only', FOLLOW_UP_MODE: 'all' }),
    ).toMatchObject({
      NOTIFY_REQUESTER: 'thread',
      NOTIFY_PRIVATE_JOBS: 'outcome-only',
      FOLLOW_UP_MODE: 'all',
    });
    expect(problems({ FOLLOW_UP_MODE: 'some' })).toEqual(['FOLLOW_UP_MODE must be all or mention']);
    expect(parsed({ NOTIFY_ON: 'ALL', NOTIFY_REQUESTER: ' DM ', LOG_LEVEL: 'Debug' })).toMatchObject({
      NOTIFY_ON: 'all',
      NOTIFY_REQUESTER: 'dm',
      LOG_LEVEL: 'debug',
    });
    expect(
      problems({
        NOTIFY_ON: 'none',
        NOTIFY_REQUESTER: 'email',
        NOTIFY_PRIVATE_JOBS: 'hide',
        LOG_LEVEL: 'trace',
      }),
    ).toEqual([
      'NOTIFY_ON must be pr or all',
      'NOTIFY_REQUESTER must be thread or dm',
      'NOTIFY_PRIVATE_JOBS must be outcome-only or quote',
      'LOG_LEVEL must be one of debug, info, warn, error',
    ]);
  });
});

describe('DOCS_AGENT_PROJECT_ID and CHANNEL_PROJECTS', () => {
  it('take only characters that are safe in a request path', () => {
    expect(parsed({ DOCS_AGENT_PROJECT_ID: 'docs.site_2-x' }).DOCS_AGENT_PROJECT_ID).toBe('docs.site_2-x');
    for (const id of ['../admin', 'docs site', 'docs/x', 'docs%2F'])
      expect(problems({ DOCS_AGENT_PROJECT_ID: id }), id).toEqual([
        'DOCS_AGENT_PROJECT_ID may contain only letters, digits, ".", "_" and "-"',
      ]);
    expect(problems({ DOCS_AGENT_PROJECT_ID: ' ' })).toEqual([
      'DOCS_AGENT_PROJECT_ID is required (the documentation project id)',
    ]);
  });

  it('pairs channels with projects, each channel once', () => {
    expect(parsed({ CHANNEL_PROJECTS: 'C0API:api-docs,,G0SDK : sdk.docs ' }).CHANNEL_PROJECTS).toEqual([
      ['C0API', 'api-docs'],
      ['G0SDK', 'sdk.docs'],
    ]);
    expect(problems({ CHANNEL_PROJECTS: 'C0API:a, C0API:b' })).toEqual([
      'CHANNEL_PROJECTS lists a channel twice',
    ]);
    for (const bad of ['C0API', 'C0API:api:docs', 'c0api:docs', 'xC0API:docs', 'C0API:../x'])
      expect(problems({ CHANNEL_PROJECTS: bad }), bad).toEqual([
        'CHANNEL_PROJECTS must be comma-separated channel:project pairs, such as C0123ABCD:docs-site',
      ]);
  });
});

describe('DATABASE_URL', () => {
  it('must be a postgres URL, and says only that when it is not', () => {
    expect(parsed({ DATABASE_URL: 'postgresql://bot@db/docs' }).DATABASE_URL).toBe(
      'postgresql://bot@db/docs',
    );
    for (const url of [
      'mysql://bot:not-a-real-secret@db/docs?sslmode=bogus',
      'x-postgres://db/docs',
      'postgres:db',
    ])
      expect(problems({ DATABASE_URL: url }), url).toEqual(['DATABASE_URL must be a postgres:// URL']);
  });

  it('has its TLS parameters checked at start-up, without quoting the URL or its password', () => {
    const url = 'postgres://bot:not-a-real-secret@db.example.com/docs?sslmode=verify-ca';
    expect(problems({ DATABASE_URL: url })).toEqual([
      expect.stringMatching(/^DATABASE_URL sslmode=verify-ca needs sslrootcert/),
    ]);
    expect(everythingSaid({ DATABASE_URL: url })).not.toContain('not-a-real-secret');
  });
});

describe('ASIDE_MARKER', () => {
  it('is trimmed, at most 10 characters, and empty turns asides off', () => {
    expect(parsed({ ASIDE_MARKER: ' !aside ' }).ASIDE_MARKER).toBe('!aside');
    expect(parsed({ ASIDE_MARKER: '0123456789' }).ASIDE_MARKER).toBe('0123456789');
    expect(problems({ ASIDE_MARKER: '0123456789a' })).toEqual([
      'ASIDE_MARKER must be at most 10 characters (or empty to turn asides off)',
    ]);
  });
});

describe('PR_LINK_HOSTS', () => {
  it('reads host names, lower-cased', () => {
    expect(parsed({ PR_LINK_HOSTS: 'GitHub.com, gitlab.example.com,' }).PR_LINK_HOSTS).toEqual([
      'github.com',
      'gitlab.example.com',
    ]);
  });

  it('refuses what is not a bare host name: a scheme, a path, a wildcard, a single label', () => {
    for (const bad of [
      'https://github.com',
      'github.com/acme',
      '*.github.com',
      'localhost',
      'github.com:443',
      ',',
      'github.com,evil/host',
    ])
      expect(problems({ PR_LINK_HOSTS: bad }), bad).toEqual([
        'PR_LINK_HOSTS must be a comma-separated list of host names, such as github.com,gitlab.example.com',
      ]);
  });
});

describe('SUGGESTED_PROMPTS', () => {
  it('reads "title|message" prompts, or a message that is its own title', () => {
    expect(parsed({ SUGGESTED_PROMPTS: ' Fix a page | Fix this: ; Just do it ;' }).SUGGESTED_PROMPTS).toEqual(
      [
        { title: 'Fix a page', message: 'Fix this:' },
        { title: 'Just do it', message: 'Just do it' },
      ],
    );
    expect(DEFAULT_SUGGESTED_PROMPTS.split(';')).toHaveLength(3);
  });

  it(`takes at most ${MAX_SUGGESTED_PROMPTS}, each with a title of at most 75 characters and a message`, () => {
    expect(parsed({ SUGGESTED_PROMPTS: 'a;b;c;d' }).SUGGESTED_PROMPTS).toHaveLength(MAX_SUGGESTED_PROMPTS);
    expect(problems({ SUGGESTED_PROMPTS: 'a;b;c;d;e' })).toEqual([
      'SUGGESTED_PROMPTS must list at most 4 prompts, separated by ";"',
    ]);
    for (const bad of [`${'t'.repeat(76)}|message`, 'title|', '|message'])
      expect(problems({ SUGGESTED_PROMPTS: bad }), bad).toEqual([
        'SUGGESTED_PROMPTS must be ";"-separated prompts, each "title|message" or just the message (titles at most 75 characters)',
      ]);
    expect(parsed({ SUGGESTED_PROMPTS: `${'t'.repeat(75)}|message` }).SUGGESTED_PROMPTS).toHaveLength(1);
  });
});

describe('METRICS_TOKEN', () => {
  const fine = 'not-a-real-secret+metrics/token==';

  it('takes a bearer token of 16 to 512 token characters', () => {
    expect(parsed({ METRICS_TOKEN: fine }).METRICS_TOKEN).toBe(fine);
    expect(parsed({ METRICS_TOKEN: 'a'.repeat(MIN_METRICS_TOKEN_CHARS) }).METRICS_TOKEN).toHaveLength(16);
    expect(parsed({ METRICS_TOKEN: 'a'.repeat(MAX_METRICS_TOKEN_CHARS) }).METRICS_TOKEN).toHaveLength(512);
  });

  it('says what is wrong with it, never what it is', () => {
    const cases: [string, string][] = [
      ['short-fake-tok', 'METRICS_TOKEN must be at least 16 characters (the bearer token /metrics requires)'],
      ['x'.repeat(513), 'METRICS_TOKEN must be at most 512 characters'],
      [
        'not a real secret token',
        'METRICS_TOKEN may contain only letters, digits and - . _ ~ + / (then = padding)',
      ],
      [
        'not-a-real=secret-token',
        'METRICS_TOKEN may contain only letters, digits and - . _ ~ + / (then = padding)',
      ],
    ];
    for (const [token, problem] of cases) {
      expect(problems({ METRICS_TOKEN: token })).toEqual([problem]);
      expect(everythingSaid({ METRICS_TOKEN: token })).not.toContain(token.slice(0, 14));
    }
  });
});

describe('secrets', () => {
  it('are required with their prefixes, and no problem echoes one', () => {
    const env = {
      SLACK_BOT_TOKEN: 'xoxp-not-a-real-secret-1',
      DOCS_AGENT_API_KEY: 'sk-not-a-real-secret-2',
      SLACK_APP_TOKEN: 'xoxb-not-a-real-secret-3',
    };
    expect(problems(env)).toEqual([
      'SLACK_BOT_TOKEN must start with "xoxb-" (the bot token from OAuth & Permissions)',
      'SLACK_APP_TOKEN must start with "xapp-" (an app-level token with connections:write)',
      'DOCS_AGENT_API_KEY must start with "mint_" (an admin API key from the Mintlify dashboard)',
    ]);
    expect(everythingSaid(env)).not.toMatch(/not-a-real-secret/);
  });

  it('leave the signing secret optional here (Socket Mode needs none)', () => {
    expect(parsed({ SLACK_SIGNING_SECRET: ' ' }).SLACK_SIGNING_SECRET).toBeUndefined();
  });
});

describe('limits of the numbers', () => {
  const HOUR = 3_600_000;
  const ms = 'milliseconds';
  const INTEGERS: [name: string, fallback: number, min: number, max: number, unit: string][] = [
    ['DOCS_AGENT_API_TIMEOUT_MS', 6_000, 100, 120_000, ms],
    ['INSTANCE_TIMEOUT_MS', 30_000, 500, 600_000, ms],
    ['PORT', 3000, 0, 65_535, 'a TCP port'],
    ['POLL_INTERVAL_MS', 10_000, 10, HOUR, ms],
    ['POLL_BACKOFF_AFTER_MS', 600_000, 0, 24 * HOUR, ms],
    ['POLL_MAX_INTERVAL_MS', 300_000, 10, HOUR, ms],
    ['POLL_MAX_RPS', 10, 1, 10_000, 'requests per second'],
    ['POLL_MAX_AGE_MS', 24 * HOUR, 1_000, 30 * 24 * HOUR, ms],
    ['MAX_INSTRUCTIONS_PER_USER_PER_HOUR', 20, 1, 100_000, 'instructions'],
    ['MAX_PROMPT_CHARS', 10_000, 1, 1_000_000, 'characters'],
    ['FOLLOW_UP_BATCH_MS', 3_000, 0, 60_000, ms],
    ['THREAD_CONTEXT_MAX_CHARS', 4_000, 0, 100_000, 'characters'],
    ['RETENTION_DAYS', 90, 0, 36_500, 'days; 0 keeps data forever'],
  ];

  it('default each whole number, and take both ends of its range', () => {
    for (const [name, fallback, min, max] of INTEGERS) {
      const read = (value?: string) => (parsed({ [name]: value }) as Record<string, unknown>)[name];
      expect(read(), name).toBe(fallback);
      expect(read(String(min)), name).toBe(min);
      expect(read(String(max)), name).toBe(max);
    }
  });

  it('name the end crossed, or a number that is not whole, with the unit', () => {
    for (const [name, , min, max, unit] of INTEGERS) {
      expect(problems({ [name]: String(min - 1) }), name).toEqual([
        `${name} must be at least ${min} (${unit})`,
      ]);
      expect(problems({ [name]: String(max + 1) }), name).toEqual([
        `${name} must be at most ${max} (${unit})`,
      ]);
      expect(problems({ [name]: '1.5' }), name).toEqual([`${name} must be a whole number (${unit})`]);
    }
  });

  it('hold each variable to its range, naming the unit', () => {
    expect(
      problems({
        DOCS_AGENT_API_TIMEOUT_MS: '99',
        POLL_MAX_RPS: '0',
        RETENTION_DAYS: '-1',
        POLL_CONCURRENCY: '1001',
      }),
    ).toEqual([
      'DOCS_AGENT_API_TIMEOUT_MS must be at least 100 (milliseconds)',
      'POLL_MAX_RPS must be at least 1 (requests per second)',
      'POLL_CONCURRENCY must be at most 1000 (polls in flight)',
      'RETENTION_DAYS must be at least 0 (days; 0 keeps data forever)',
    ]);
    expect(parsed({ POLL_CONCURRENCY: ' 12 ' }).POLL_CONCURRENCY).toBe(12);
    expect(problems({ POLL_CONCURRENCY: '0' })).toEqual([
      'POLL_CONCURRENCY must be at least 1 (polls in flight)',
    ]);
    for (const bad of ['many', '2.5'])
      expect(problems({ POLL_CONCURRENCY: bad })).toEqual([
        'POLL_CONCURRENCY must be a whole number (polls in flight)',
      ]);
  });
});
