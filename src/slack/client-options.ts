import type { WebClientOptions } from '@slack/web-api';
import type { Config } from '../config/config.js';
import type { Logger } from '../logging/logger.js';
import { slackLogger } from './slack-logger.js';

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
    // Its warnings (a refused call, a failed request) go through our logger and its redaction.
    logger: slackLogger(logger, component, config.logLevel),
  };
}
