import type { WebClient } from '@slack/web-api';
import type { Logger } from '../logging/logger.js';
import { type Redact, redactDeep } from '../logging/logger.js';
import { SlackCallError, toSlackCallError } from './slack-errors.js';

/**
 * The one way the bot calls Slack: every Web API call (the gateway's, the agent sessions', the
 * Workflow Builder steps' answers) and every `response_url` post goes through it, so each is
 * masked, mapped to {@link SlackCallError} and counted the same way, once.
 */
export interface SlackCaller {
  /**
   * Makes the call named `method` (`chat.postMessage`…, or `response_url`): `send` is handed the
   * bot's Web API client and `args` with every string in them, however deep, masked as the logs
   * are. What `send` adds to them itself goes out as it is: only what the bot writes itself and
   * Slack must get as written (a message's metadata, which finds the post again; a step's own
   * token). A failure is thrown as a {@link SlackCallError}, logged at debug and reported to
   * `onError` with the method and code.
   */
  call<A, T>(method: string, args: A, send: (client: WebClient, args: A) => Promise<T>): Promise<T>;
  /** `value` masked as {@link SlackCaller.call} masks what it sends: to compare with what was sent. */
  mask<T>(value: T): T;
}

export interface SlackCallerOptions {
  /** The bot's Web API client (`slackClientOptions`: no retries, 429s rejected at once). */
  client: WebClient;
  logger: Pick<Logger, 'debug'>;
  /**
   * The logs' redaction (`createRedactor` of every configured secret). The texts are masked where
   * they are built from what the agent API said; this is the last check, on the way out, for any
   * path that brings a secret from elsewhere.
   */
  redact: Redact;
  /** Called with every failed call's method and error code, for metrics. */
  onError?: (method: string, code: string) => void;
}

export function createSlackCaller({ client, logger, redact, onError }: SlackCallerOptions): SlackCaller {
  const mask = <T>(value: T): T => redactDeep(value, redact);
  return {
    mask,
    async call(method, args, send) {
      const masked = mask(args);
      try {
        return await send(client, masked);
      } catch (error) {
        const typed = error instanceof SlackCallError ? error : toSlackCallError(method, error);
        logger.debug('Slack call failed', { method, code: typed.code });
        onError?.(method, typed.code);
        throw typed;
      }
    },
  };
}
