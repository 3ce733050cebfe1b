import { z } from 'zod';
import { LOG_LEVELS } from '../logging/logger.js';
import { DatabaseTlsError, parseDatabaseTls } from './database-tls.js';
import {
  blankToUndefined,
  idList,
  integer,
  notifyChannels,
  optionalSecret,
  secret,
  serviceUrl,
} from './fields.js';

/** Shortest `METRICS_TOKEN` accepted: anything shorter could be guessed by a patient scraper. */
export const MIN_METRICS_TOKEN_CHARS = 16;
/** Longest `METRICS_TOKEN` accepted, so the header carrying it stays small. */
export const MAX_METRICS_TOKEN_CHARS = 512;

/** Most suggested prompts Slack shows in a new assistant thread. */
export const MAX_SUGGESTED_PROMPTS = 4;
/** What a new assistant thread suggests, as `SUGGESTED_PROMPTS` writes it: `title|message;…`. */
export const DEFAULT_SUGGESTED_PROMPTS = [
  'Document a feature|Document the new feature described here: ',
  'Fix a page|Fix this problem in the docs: ',
  'Add an FAQ entry|Add an FAQ entry answering: ',
].join(';');

/** The environment variables the bot reads, each checked and given its default. */
export const envSchema = z.object({
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
  // People a workflow's "On behalf of" may name (a person's id: U…, or W… in Enterprise Grid).
  WORKFLOW_ON_BEHALF_OF_USER_IDS: idList(
    'user ids such as U0123ABCD (or W0123ABCD in Enterprise Grid)',
    /^[UW][A-Z0-9]+$/,
  ),
  ALLOW_GUESTS: z.preprocess(
    (v) => (typeof v === 'string' ? v.trim().toLowerCase() || undefined : v),
    z
      .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'must be true or false' })
      .default('false')
      .transform((v) => v === 'true' || v === '1' || v === 'yes'),
  ),
  // Unset: direct messages follow ALLOWED_CHANNEL_IDS (see config.ts); true or false decides.
  ALLOW_DIRECT_MESSAGES: z.preprocess(
    (v) => (typeof v === 'string' ? v.trim().toLowerCase() || undefined : v),
    z
      .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'must be true or false' })
      .optional()
      .transform((v) => (v === undefined ? undefined : v === 'true' || v === '1' || v === 'yes')),
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
  NOTIFY_CHANNEL_ID: notifyChannels(),
  NOTIFY_ON: z.preprocess(
    (v) => (typeof v === 'string' ? v.trim().toLowerCase() || undefined : v),
    z.enum(['pr', 'all'], { error: 'must be pr or all' }).default('pr'),
  ),
  NOTIFY_REQUESTER: z.preprocess(
    (v) => (typeof v === 'string' ? v.trim().toLowerCase() || undefined : v),
    z.enum(['thread', 'dm'], { error: 'must be thread or dm' }).default('thread'),
  ),
  NOTIFY_PRIVATE_JOBS: z.preprocess(
    (v) => (typeof v === 'string' ? v.trim().toLowerCase() || undefined : v),
    z.enum(['outcome-only', 'quote'], { error: 'must be outcome-only or quote' }).default('outcome-only'),
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
  // A secret: the messages say what is wrong with it, never what it is. Unset: pull requests are
  // not followed, and nothing is asked of GitHub.
  GITHUB_TOKEN: z.preprocess(
    blankToUndefined,
    z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9_]{20,255}$/, {
        error: 'must be a GitHub token (20 to 255 letters, digits and _) with read access to pull requests',
      })
      .optional(),
  ),
  GITHUB_API_URL: serviceUrl('https://api.github.com'),
  // Unset: the pace of `FOLLOWING` (a minute). Quicker only for a demonstration or a test.
  GITHUB_CHECK_EVERY_MS: z.preprocess(
    blankToUndefined,
    z.coerce
      .number({ error: 'must be a whole number (milliseconds)' })
      .int({ error: 'must be a whole number (milliseconds)' })
      .min(10, { error: 'must be at least 10 (milliseconds)' })
      .max(3_600_000, { error: 'must be at most 3600000 (milliseconds)' })
      .optional(),
  ),
  // Not trimmed to nothing: an explicitly empty value shows no suggested prompts.
  SUGGESTED_PROMPTS: z
    .string()
    .default(DEFAULT_SUGGESTED_PROMPTS)
    .transform((v) =>
      v
        .split(';')
        .map((prompt) => prompt.trim())
        .filter(Boolean)
        .map((prompt) => {
          const bar = prompt.indexOf('|');
          const title = bar < 0 ? prompt : prompt.slice(0, bar).trim();
          return { title, message: bar < 0 ? prompt : prompt.slice(bar + 1).trim() };
        }),
    )
    .refine((prompts) => prompts.length <= MAX_SUGGESTED_PROMPTS, {
      error: `must list at most ${MAX_SUGGESTED_PROMPTS} prompts, separated by ";"`,
    })
    .refine((prompts) => prompts.every((p) => p.title && p.message && p.title.length <= 75), {
      error:
        'must be ";"-separated prompts, each "title|message" or just the message (titles at most 75 characters)',
    }),
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
