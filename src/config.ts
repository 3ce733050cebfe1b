import { z } from 'zod';
import { databasePassword } from './secrets.js';
import { DatabaseTlsError, parseDatabaseTls } from './store/postgres/connection-tls.js';

/** Log levels, most verbose first. */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Validated configuration. Built once at start-up by {@link readConfig} and passed in. */
export interface Config {
  slack: {
    /** Bot token, `xoxb-…`. */
    botToken: string;
    /** Request signing secret; absent only in Socket Mode. */
    signingSecret: string | undefined;
    /** App-level token, `xapp-…`; when present the app runs in Socket Mode. */
    appToken: string | undefined;
    /** Web API base URL, ending in `/`: `https:`, or `http:` to a loopback address. */
    apiUrl: string;
  };
  agent: {
    /** Admin API key, `mint_…`. */
    apiKey: string;
    projectId: string;
    /** API base URL without a trailing slash: `https:`, or `http:` to a loopback address. */
    apiUrl: string;
    /** Per-request time-out in milliseconds. */
    timeoutMs: number;
  };
  /** SQLite file path (used when no `databaseUrl` is set). */
  databasePath: string;
  /**
   * PostgreSQL connection URL; when set, the store lives there instead of in SQLite. Its TLS
   * parameters (`sslmode`, `sslrootcert`…) are already checked, and keep libpq's meaning.
   */
  databaseUrl: string | undefined;
  /**
   * On PostgreSQL, an instance not heard from for this many milliseconds is taken for dead and
   * another takes over its work. Default 30000.
   */
  instanceTimeoutMs: number;
  /** HTTP port (also serves `/healthz` in Socket Mode). 0 picks a free port. */
  port: number;
  poll: {
    /** Interval between polls of a freshly started run, in milliseconds. */
    intervalMs: number;
    /** Age of a run, in milliseconds, until which it is polled every `intervalMs`; then less often. */
    backoffAfterMs: number;
    /** Longest interval the per-job backoff grows to, in milliseconds. */
    maxIntervalMs: number;
    /** Most agent API GETs per second, across every instance sharing the store. */
    maxRps: number;
    /** A run still active after this many milliseconds gets a final "stopped watching" message. */
    maxAgeMs: number;
    /** How many job polls may be in flight at once. */
    concurrency: number;
  };
  access: {
    /** Channels where the bot may be used; null means every channel. */
    allowedChannelIds: ReadonlySet<string> | null;
    /** People who may use the bot; null means everyone. */
    allowedUserIds: ReadonlySet<string> | null;
    /** Whether guests (restricted and ultra-restricted accounts) may use the bot. */
    allowGuests: boolean;
    /** Instructions (commands and follow-ups) one person may give per rolling hour. */
    maxInstructionsPerUserPerHour: number;
  };
  /** Longest instruction accepted, in characters of plain text. */
  maxPromptChars: number;
  followUps: {
    /** `all`: every human reply in a job's thread is a follow-up; `mention`: only replies that mention the bot. */
    mode: 'all' | 'mention';
    /** Replies starting with this are asides, never sent to the agent; empty turns asides off. Default `//`. */
    asideMarker: string;
    /** Replies in one thread within this many milliseconds of the first are sent as one follow-up. Default 3000. */
    batchMs: number;
  };
  /** Most characters of earlier thread messages given to the agent with a job started in a thread. */
  threadContextMaxChars: number;
  /** Documentation project per channel id; channels not listed use `agent.projectId`. */
  channelProjects: ReadonlyMap<string, string>;
  /**
   * Hosts whose pull request addresses (from the agent API) are shown as links and buttons,
   * lower-case. Any other address is shown as inert text. Default `github.com`.
   */
  prLinkHosts: readonly string[];
  /**
   * Days the texts of a finished job (instruction, prompts with thread context, follow-ups,
   * response_url) and delivered messages are kept before they are erased. Default 90; 0 keeps
   * them forever.
   */
  retentionDays: number;
  /**
   * Bearer token that `GET /metrics` requires; when absent there is no metrics route at all.
   * At least {@link MIN_METRICS_TOKEN_CHARS} characters.
   */
  metricsToken: string | undefined;
  logLevel: LogLevel;
}

/** Shortest `METRICS_TOKEN` accepted: anything shorter could be guessed by a patient scraper. */
export const MIN_METRICS_TOKEN_CHARS = 16;
/** Longest `METRICS_TOKEN` accepted, so the header carrying it stays small. */
export const MAX_METRICS_TOKEN_CHARS = 512;

/** Thrown when the environment does not describe a runnable configuration. */
export class ConfigError extends Error {
  override name = 'ConfigError';
  /** One human-readable line per bad variable. */
  readonly problems: string[];

  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.problems = problems;
  }
}

type Env = Record<string, string | undefined>;

const blankToUndefined = (value: unknown) =>
  typeof value === 'string' && value.trim() === '' ? undefined : value;

// Secrets are checked by shape only; messages never echo the value.
const secret = (prefix: string, what: string) =>
  z.preprocess(
    blankToUndefined,
    z
      .string({ error: `is required (${what})` })
      .refine((v) => v.startsWith(prefix), { error: `must start with "${prefix}" (${what})` }),
  );

const optionalSecret = (prefix: string, what: string) =>
  z.preprocess(
    blankToUndefined,
    z
      .string()
      .refine((v) => v.startsWith(prefix), { error: `must start with "${prefix}" (${what})` })
      .optional(),
  );

/** Hosts plain `http:` may reach: nothing on the way can read or change the traffic. */
function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}

// Secrets travel to these URLs (the bot token, the admin key): plain http only on this machine.
const serviceUrl = (fallback: string) =>
  z.preprocess(
    blankToUndefined,
    z
      .string()
      .default(fallback)
      .superRefine((v, ctx) => {
        let url: URL;
        try {
          url = new URL(v);
        } catch {
          ctx.addIssue({ code: 'custom', message: 'must be an http(s) URL' });
          return;
        }
        if (url.protocol === 'https:') return;
        if (url.protocol !== 'http:') {
          ctx.addIssue({ code: 'custom', message: 'must be an http(s) URL' });
        } else if (!isLoopbackHost(url.hostname)) {
          ctx.addIssue({
            code: 'custom',
            message:
              'must use https: the bot sends its credentials there (plain http is allowed only to a loopback address: localhost, 127.0.0.0/8, [::1])',
          });
        }
      }),
  );

const integer = (fallback: number, min: number, max: number, unit: string) =>
  z.preprocess(
    blankToUndefined,
    z.coerce
      .number({ error: `must be a whole number (${unit})` })
      .int({ error: `must be a whole number (${unit})` })
      .min(min, { error: `must be at least ${min} (${unit})` })
      .max(max, { error: `must be at most ${max} (${unit})` })
      .default(fallback),
  );

/** A comma-separated list of Slack ids; empty means "no restriction". */
const idList = (what: string) =>
  z.preprocess(
    blankToUndefined,
    z
      .string()
      .optional()
      .transform((v) =>
        v
          ? v
              .split(',')
              .map((id) => id.trim())
              .filter(Boolean)
          : [],
      )
      .refine((ids) => ids.every((id) => /^[A-Z0-9]+$/.test(id)), {
        error: `must be a comma-separated list of ${what}`,
      }),
  );

const envSchema = z.object({
  SLACK_BOT_TOKEN: secret('xoxb-', 'the bot token from OAuth & Permissions'),
  SLACK_SIGNING_SECRET: z.preprocess(blankToUndefined, z.string().optional()),
  SLACK_APP_TOKEN: optionalSecret('xapp-', 'an app-level token with connections:write'),
  SLACK_API_URL: serviceUrl('https://slack.com/api/'),
  DOCS_AGENT_API_KEY: secret('mint_', 'an admin API key from the Mintlify dashboard'),
  DOCS_AGENT_PROJECT_ID: z.preprocess(
    blankToUndefined,
    z
      .string({ error: 'is required (the documentation project id)' })
      .regex(/^[A-Za-z0-9._-]+$/, { error: 'may contain only letters, digits, ".", "_" and "-"' }),
  ),
  DOCS_AGENT_API_URL: serviceUrl('https://api.mintlify.com'),
  DOCS_AGENT_API_TIMEOUT_MS: integer(6_000, 100, 120_000, 'milliseconds'),
  DATABASE_URL: z.preprocess(
    blankToUndefined,
    z
      .string()
      .refine((v) => /^postgres(ql)?:\/\//.test(v), { error: 'must be a postgres:// URL', abort: true })
      .superRefine((v, ctx) => {
        // TLS parameters are read here too, so a bad sslmode stops start-up with the other problems.
        try {
          parseDatabaseTls(v);
        } catch (error) {
          if (!(error instanceof DatabaseTlsError)) throw error;
          ctx.addIssue({ code: 'custom', message: error.message });
        }
      })
      .optional(),
  ),
  DATABASE_PATH: z.preprocess(blankToUndefined, z.string().default('./data/docs-agent.sqlite')),
  INSTANCE_TIMEOUT_MS: integer(30_000, 500, 600_000, 'milliseconds'),
  PORT: integer(3000, 0, 65_535, 'a TCP port'),
  POLL_INTERVAL_MS: integer(10_000, 10, 3_600_000, 'milliseconds'),
  POLL_BACKOFF_AFTER_MS: integer(600_000, 0, 24 * 3_600_000, 'milliseconds'),
  POLL_MAX_INTERVAL_MS: integer(300_000, 10, 3_600_000, 'milliseconds'),
  POLL_MAX_RPS: integer(10, 1, 10_000, 'requests per second'),
  POLL_MAX_AGE_MS: integer(24 * 3_600_000, 1_000, 30 * 24 * 3_600_000, 'milliseconds'),
  POLL_CONCURRENCY: z.preprocess(
    blankToUndefined,
    z.coerce
      .number({ error: 'must be a whole number (polls in flight)' })
      .int({ error: 'must be a whole number (polls in flight)' })
      .min(1, { error: 'must be at least 1 (polls in flight)' })
      .max(1_000, { error: 'must be at most 1000 (polls in flight)' })
      .optional(),
  ),
  ALLOWED_CHANNEL_IDS: idList('channel ids such as C0123ABCD'),
  ALLOWED_USER_IDS: idList('user ids such as U0123ABCD'),
  ALLOW_GUESTS: z.preprocess(
    (v) => (typeof v === 'string' ? v.trim().toLowerCase() || undefined : v),
    z
      .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'must be true or false' })
      .default('false')
      .transform((v) => v === 'true' || v === '1' || v === 'yes'),
  ),
  MAX_INSTRUCTIONS_PER_USER_PER_HOUR: integer(20, 1, 100_000, 'instructions'),
  MAX_PROMPT_CHARS: integer(10_000, 1, 1_000_000, 'characters'),
  FOLLOW_UP_MODE: z.preprocess(
    (v) => (typeof v === 'string' ? v.trim().toLowerCase() || undefined : v),
    z.enum(['all', 'mention'], { error: 'must be all or mention' }).default('all'),
  ),
  // Not trimmed to nothing: an explicitly empty value turns asides off.
  ASIDE_MARKER: z
    .string()
    .default('//')
    .transform((v) => v.trim())
    .refine((v) => v.length <= 10, { error: 'must be at most 10 characters (or empty to turn asides off)' }),
  FOLLOW_UP_BATCH_MS: integer(3_000, 0, 60_000, 'milliseconds'),
  THREAD_CONTEXT_MAX_CHARS: integer(4_000, 0, 100_000, 'characters'),
  CHANNEL_PROJECTS: z.preprocess(
    blankToUndefined,
    z
      .string()
      .optional()
      .transform((v) =>
        (v ?? '')
          .split(',')
          .map((pair) => pair.trim())
          .filter(Boolean)
          .map((pair) => pair.split(':').map((part) => part.trim())),
      )
      .refine(
        (pairs) =>
          pairs.every(
            (p) => p.length === 2 && /^[A-Z0-9]+$/.test(p[0] ?? '') && /^[A-Za-z0-9._-]+$/.test(p[1] ?? ''),
          ),
        { error: 'must be comma-separated channel:project pairs, such as C0123ABCD:docs-site' },
      )
      .refine((pairs) => new Set(pairs.map((p) => p[0])).size === pairs.length, {
        error: 'lists a channel twice',
      }),
  ),
  PR_LINK_HOSTS: z.preprocess(
    blankToUndefined,
    z
      .string()
      .default('github.com')
      .transform((v) =>
        v
          .split(',')
          .map((host) => host.trim().toLowerCase())
          .filter(Boolean),
      )
      .refine((hosts) => hosts.length > 0 && hosts.every((h) => /^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(h)), {
        error: 'must be a comma-separated list of host names, such as github.com,gitlab.example.com',
      }),
  ),
  RETENTION_DAYS: integer(90, 0, 36_500, 'days; 0 keeps data forever'),
  // A secret: the messages say what is wrong with it, never what it is.
  METRICS_TOKEN: z.preprocess(
    blankToUndefined,
    z
      .string()
      .min(MIN_METRICS_TOKEN_CHARS, {
        error: `must be at least ${MIN_METRICS_TOKEN_CHARS} characters (the bearer token /metrics requires)`,
      })
      .max(MAX_METRICS_TOKEN_CHARS, { error: `must be at most ${MAX_METRICS_TOKEN_CHARS} characters` })
      // RFC 6750's token characters: the token must fit an Authorization header as it is.
      .regex(/^[A-Za-z0-9\-._~+/]+=*$/, {
        error: 'may contain only letters, digits and - . _ ~ + / (then = padding)',
      })
      .optional(),
  ),
  LOG_LEVEL: z.preprocess(
    (v) => (typeof v === 'string' ? v.trim().toLowerCase() || undefined : v),
    z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }).default('info'),
  ),
});

/**
 * Reads and validates configuration from `env` (default `process.env`).
 * Throws {@link ConfigError} naming every missing or malformed variable at once.
 */
export function readConfig(env: Env = process.env): Config {
  const result = envSchema.safeParse(env);
  const problems = result.success
    ? []
    : result.error.issues.map((issue) => `${String(issue.path[0] ?? 'environment')} ${issue.message}`);
  // Checked outside the schema so it is reported together with every other problem.
  if (!blankToUndefined(env.SLACK_APP_TOKEN) && !blankToUndefined(env.SLACK_SIGNING_SECRET)) {
    problems.push(
      'SLACK_SIGNING_SECRET is required in HTTP mode (set it, or set SLACK_APP_TOKEN to use Socket Mode)',
    );
  }
  if (!result.success || problems.length > 0) throw new ConfigError([...new Set(problems)]);
  const e = result.data;
  return {
    slack: {
      botToken: e.SLACK_BOT_TOKEN,
      signingSecret: e.SLACK_SIGNING_SECRET,
      appToken: e.SLACK_APP_TOKEN,
      apiUrl: e.SLACK_API_URL.endsWith('/') ? e.SLACK_API_URL : `${e.SLACK_API_URL}/`,
    },
    agent: {
      apiKey: e.DOCS_AGENT_API_KEY,
      projectId: e.DOCS_AGENT_PROJECT_ID,
      apiUrl: e.DOCS_AGENT_API_URL.replace(/\/+$/, ''),
      timeoutMs: e.DOCS_AGENT_API_TIMEOUT_MS,
    },
    databasePath: e.DATABASE_PATH,
    databaseUrl: e.DATABASE_URL,
    instanceTimeoutMs: e.INSTANCE_TIMEOUT_MS,
    port: e.PORT,
    poll: {
      intervalMs: e.POLL_INTERVAL_MS,
      backoffAfterMs: e.POLL_BACKOFF_AFTER_MS,
      maxIntervalMs: Math.max(e.POLL_MAX_INTERVAL_MS, e.POLL_INTERVAL_MS),
      maxRps: e.POLL_MAX_RPS,
      maxAgeMs: e.POLL_MAX_AGE_MS,
      // Enough polls in flight to spend the budget even when each takes half a second.
      concurrency: e.POLL_CONCURRENCY ?? Math.max(8, Math.ceil(e.POLL_MAX_RPS / 2)),
    },
    access: {
      allowedChannelIds: e.ALLOWED_CHANNEL_IDS.length ? new Set(e.ALLOWED_CHANNEL_IDS) : null,
      allowedUserIds: e.ALLOWED_USER_IDS.length ? new Set(e.ALLOWED_USER_IDS) : null,
      allowGuests: e.ALLOW_GUESTS,
      maxInstructionsPerUserPerHour: e.MAX_INSTRUCTIONS_PER_USER_PER_HOUR,
    },
    maxPromptChars: e.MAX_PROMPT_CHARS,
    followUps: { mode: e.FOLLOW_UP_MODE, asideMarker: e.ASIDE_MARKER, batchMs: e.FOLLOW_UP_BATCH_MS },
    threadContextMaxChars: e.THREAD_CONTEXT_MAX_CHARS,
    channelProjects: new Map(
      e.CHANNEL_PROJECTS.map(([channel, project]) => [channel as string, project as string]),
    ),
    prLinkHosts: e.PR_LINK_HOSTS,
    retentionDays: e.RETENTION_DAYS,
    metricsToken: e.METRICS_TOKEN,
    logLevel: e.LOG_LEVEL,
  };
}

/** Every secret value in the configuration, for log redaction. */
export function secretsOf(config: Config): string[] {
  return [
    config.slack.botToken,
    config.slack.signingSecret,
    config.slack.appToken,
    config.agent.apiKey,
    config.metricsToken,
    ...databasePassword(config.databaseUrl),
  ].filter((s): s is string => typeof s === 'string' && s.length > 0);
}
