import { LogLevel, type Logger as SlackLogger } from '@slack/bolt';
import type { WebClientOptions } from '@slack/web-api';
import type { Config } from '../config/config.js';
import type { LogLevel as AppLogLevel, Logger } from '../logging/logger.js';
import { webApiFetch } from '../util/http-request.js';

/** How long one Slack Web API call may take before it is abandoned, in milliseconds. */
export const SLACK_CALL_TIMEOUT_MS = 10_000;

/**
 * The one configuration of every Web API client in the process: the bot's own, Bolt's, and the
 * Socket Mode receiver's, so they all reach the same `SLACK_API_URL`, log through our logger
 * (and its redaction), and share one retry policy.
 */
export function slackClientOptions(
  config: Pick<Config, 'slack' | 'logLevel'>,
  logger: Logger,
  /** The `component` field of its log lines: who owns the client. */
  component: 'web-api' | 'bolt',
): WebClientOptions {
  return {
    slackApiUrl: config.slack.apiUrl,
    // No retries here: a repeated chat.postMessage whose first answer was lost posts twice. The
    // outbox owns retries (and checks Slack for an earlier copy first).
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: SLACK_CALL_TIMEOUT_MS,
    // Node's own HTTP, not its `fetch`: the same requests for a fraction of the CPU.
    fetch: webApiFetch,
    // Its warnings (a refused call, a failed request) go through our logger and its redaction.
    logger: slackLogger(logger, component, config.logLevel),
  };
}

const SLACK_LEVELS: Record<AppLogLevel, LogLevel> = {
  debug: LogLevel.DEBUG,
  info: LogLevel.INFO,
  warn: LogLevel.WARN,
  error: LogLevel.ERROR,
};

/** One argument of a library's log call as text: errors by name and message, objects as JSON. */
function describe(part: unknown): string {
  if (typeof part === 'string') return part;
  if (part instanceof Error) return `${part.name}: ${part.message}`;
  try {
    return JSON.stringify(part) ?? String(part);
  } catch {
    return String(part);
  }
}

/**
 * The `Logger` that Slack's libraries (Bolt, its receivers, the Web API and Socket Mode
 * clients) take, writing through the app's logger: their lines are JSON like ours, and pass
 * the same redaction. Nothing of theirs reaches the console directly.
 *
 * Filtering stays with the app's logger (`LOG_LEVEL`). `getLevel` starts at that level, so a
 * library skips work for debug lines that would be dropped anyway; `setLevel` changes what
 * `getLevel` reports and filters nothing; `setName` does nothing (the component names the source).
 *
 * @param component added to every line as `component`, e.g. `bolt` or `web-api`.
 */
export function slackLogger(logger: Logger, component: string, level: AppLogLevel): SlackLogger {
  const log = logger.child({ component });
  const text = (parts: unknown[]) => parts.map(describe).join(' ');
  let reported = SLACK_LEVELS[level];
  return {
    debug: (...parts: unknown[]) => log.debug(text(parts)),
    info: (...parts: unknown[]) => log.info(text(parts)),
    warn: (...parts: unknown[]) => log.warn(text(parts)),
    error: (...parts: unknown[]) => log.error(text(parts)),
    setLevel: (next: LogLevel) => {
      reported = next;
    },
    getLevel: () => reported,
    setName: () => {},
  };
}

/** The Slack libraries' level for the app's `LOG_LEVEL`. */
export const slackLogLevel = (level: AppLogLevel): LogLevel => SLACK_LEVELS[level];
