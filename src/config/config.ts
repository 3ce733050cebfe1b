import { databasePassword, type LogLevel } from '../logging/logger.js';
import { envSchema } from './env-schema.js';
import { blankToUndefined, type NotifyChannels } from './fields.js';

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
    /**
     * Direct messages to the bot (`ALLOW_DIRECT_MESSAGES`): `false` refuses them; `true` allows them
     * even when `allowedChannelIds` is set; undefined (the default) allows them only when no
     * channel allow-list is set. In the assistant pane opened beside a channel, that channel must
     * also pass `allowedChannelIds`.
     */
    allowDirectMessages?: boolean | undefined;
    /** Instructions (commands and follow-ups) one person may give per rolling hour. */
    maxInstructionsPerUserPerHour: number;
  };
  /**
   * People a Workflow Builder step may start jobs for when they are not the person who used the
   * workflow (`WORKFLOW_ON_BEHALF_OF_USER_IDS`): the step's "On behalf of". Empty (the default):
   * a step's job is always the verified person's, and naming anyone else is refused.
   */
  workflowOnBehalfOf: ReadonlySet<string>;
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
  /** Prompts a new assistant thread suggests (`SUGGESTED_PROMPTS`), at most four. */
  suggestedPrompts: readonly { title: string; message: string }[];
  /** Documentation project per channel id; channels not listed use `agent.projectId`. */
  channelProjects: ReadonlyMap<string, string>;
  /** Outcomes told outside the job's thread. */
  notify: {
    /** Channels where runs are announced, by project (`NOTIFY_CHANNEL_ID`); none by default. */
    channels: NotifyChannels;
    /** `pr` (default): announce runs that opened a pull request; `all`: every outcome. */
    on: 'pr' | 'all';
    /** `thread` (default): the requester is mentioned in the thread; `dm`: also told by direct message. */
    requester: 'thread' | 'dm';
    /**
     * What a notification channel is told of a job asked for in a direct message, the assistant
     * pane or a private channel (`NOTIFY_PRIVATE_JOBS`): `outcome-only` (default), its outcome and
     * pull request; `quote`, its instruction quoted too. Never a link to, or a mention of, where it
     * was asked.
     */
    privateJobs: 'outcome-only' | 'quote';
  };
  /**
   * Hosts whose pull request addresses (from the agent API) are shown as links and buttons,
   * lower-case. Any other address is shown as inert text. Default `github.com`.
   */
  prLinkHosts: readonly string[];
  /** Pull requests followed to their end on GitHub (or GitHub Enterprise Server). */
  github: {
    /** `GITHUB_TOKEN`, read access to pull requests; absent: nothing is followed or asked. */
    token: string | undefined;
    /** The REST API's base without a trailing slash (`GITHUB_API_URL`): `https:`, or `http:` to a loopback address. */
    apiUrl: string;
    /**
     * `GITHUB_CHECK_EVERY_MS`: how far apart a young pull request's checks are, and how often
     * finished jobs are looked at for new ones; absent: the pace of `FOLLOWING`.
     */
    checkEveryMs: number | undefined;
  };
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
  if (result.success) problems.push(...unknownNotifyProjects(result.data));
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
      allowDirectMessages: e.ALLOW_DIRECT_MESSAGES,
      maxInstructionsPerUserPerHour: e.MAX_INSTRUCTIONS_PER_USER_PER_HOUR,
    },
    workflowOnBehalfOf: new Set(e.WORKFLOW_ON_BEHALF_OF_USER_IDS),
    maxPromptChars: e.MAX_PROMPT_CHARS,
    followUps: { mode: e.FOLLOW_UP_MODE, asideMarker: e.ASIDE_MARKER, batchMs: e.FOLLOW_UP_BATCH_MS },
    threadContextMaxChars: e.THREAD_CONTEXT_MAX_CHARS,
    channelProjects: new Map(
      e.CHANNEL_PROJECTS.map(([channel, project]) => [channel as string, project as string]),
    ),
    suggestedPrompts: e.SUGGESTED_PROMPTS,
    notify: {
      channels: e.NOTIFY_CHANNEL_ID,
      on: e.NOTIFY_ON,
      requester: e.NOTIFY_REQUESTER,
      privateJobs: e.NOTIFY_PRIVATE_JOBS,
    },
    prLinkHosts: e.PR_LINK_HOSTS,
    github: {
      token: e.GITHUB_TOKEN,
      apiUrl: e.GITHUB_API_URL.replace(/\/+$/, ''),
      checkEveryMs: e.GITHUB_CHECK_EVERY_MS,
    },
    retentionDays: e.RETENTION_DAYS,
    metricsToken: e.METRICS_TOKEN,
    logLevel: e.LOG_LEVEL,
  };
}

/** A project named in NOTIFY_CHANNEL_ID that no channel runs on is a typo: say so at start-up. */
function unknownNotifyProjects(e: {
  DOCS_AGENT_PROJECT_ID: string;
  CHANNEL_PROJECTS: string[][];
  NOTIFY_CHANNEL_ID: NotifyChannels;
}): string[] {
  const known = new Set([e.DOCS_AGENT_PROJECT_ID, ...e.CHANNEL_PROJECTS.map((pair) => pair[1])]);
  return [...e.NOTIFY_CHANNEL_ID.byProject.keys()]
    .filter((project) => !known.has(project))
    .map(
      (project) =>
        `NOTIFY_CHANNEL_ID names project "${project}", which is neither DOCS_AGENT_PROJECT_ID nor a project of CHANNEL_PROJECTS`,
    );
}

/** Every secret value in the configuration, for log redaction. */
export function secretsOf(config: Config): string[] {
  return [
    config.slack.botToken,
    config.slack.signingSecret,
    config.slack.appToken,
    config.agent.apiKey,
    config.metricsToken,
    config.github.token,
    ...databasePassword(config.databaseUrl),
  ].filter((s): s is string => typeof s === 'string' && s.length > 0);
}

/** What says which documentation project serves where: `DOCS_AGENT_PROJECT_ID` and `CHANNEL_PROJECTS`. */
export interface ProjectSettings {
  agent: Pick<Config['agent'], 'projectId'>;
  channelProjects: Config['channelProjects'];
}

/** The project a job asked for in `channelId` runs in: the channel's own, else the deployment's. */
export function projectForChannel(settings: ProjectSettings, channelId: string): string {
  return settings.channelProjects.get(channelId) ?? settings.agent.projectId;
}

/** Every project the deployment serves, each once, the deployment's default first. */
export function servedProjects(settings: ProjectSettings): string[] {
  return [...new Set([settings.agent.projectId, ...settings.channelProjects.values()])];
}

/** Whether `project` is one the deployment serves (the default, or one a channel runs in). */
export function servesProject(settings: ProjectSettings, project: string): boolean {
  return servedProjects(settings).includes(project);
}

/**
 * The project a recorded job or use ran in: one recorded without a project (before projects per
 * channel existed) ran in the deployment's default.
 */
export function projectOfRecord(projectId: string | null | undefined, defaultProject: string): string {
  return projectId ?? defaultProject;
}
