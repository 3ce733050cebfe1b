import { WebClient } from '@slack/web-api';
import type { LogLevel } from '../../src/logging/logger.js';
import { createLogger, createRedactor } from '../../src/logging/logger.js';
import { createSlackCaller } from '../../src/slack/caller.js';
import { slackClientOptions } from '../../src/slack/client-options.js';
import { createSlackLimits } from '../../src/slack/limits.js';
import { BOT_TOKEN } from './slack-stand-in.js';

/**
 * A real Web API client on `apiUrl` (the Slack stand-in's), configured as the app configures
 * its own (`slackClientOptions`: no retries, 429s rejected at once), logging into `lines`, and
 * the one caller on it, masking `secrets` as the app masks its own.
 */
export function appSlackClient(
  apiUrl: string,
  {
    token = BOT_TOKEN,
    logLevel = 'error',
    secrets = [token],
    now,
  }: {
    token?: string;
    logLevel?: LogLevel;
    /** What the logger masks. */
    secrets?: string[];
    /** The clock Slack's rate limits are kept on; default the process's. */
    now?: () => number;
  } = {},
) {
  const lines: string[] = [];
  const logger = createLogger({ level: logLevel, secrets, write: (line) => lines.push(line) });
  const config = {
    slack: { botToken: token, signingSecret: undefined, appToken: undefined, apiUrl },
    logLevel,
  };
  const client = new WebClient(token, slackClientOptions(config, logger, 'web-api'));
  return {
    client,
    caller: createSlackCaller({
      client,
      logger,
      redact: createRedactor(secrets),
      limits: createSlackLimits(now ? { now } : {}),
    }),
    logger,
    lines,
  };
}
