import {
  WebAPIHTTPError,
  WebAPIPlatformError,
  WebAPIRateLimitedError,
  WebAPIRequestError,
  type WebClient,
} from '@slack/web-api';
import { type Logger, type Redact, redactDeep } from '../logging/logger.js';

/**
 * Errors that mean the bot cannot post in a channel (or its thread) any more: it was archived,
 * deleted, or the bot is not a member. One list, so every place that tells the person (or gives
 * a post up) agrees on what "the channel is gone" means.
 */
/** Private channels the bot is not in look missing to it. */
const NOT_A_MEMBER = new Set(['channel_not_found', 'not_in_channel']);
const CHANNEL_CLOSED = new Set([...NOT_A_MEMBER, 'is_archived']);

/** Whether Slack's error `code` says the bot is not a member of the channel (it can be invited). */
export const isNotAMember = (code: string | undefined): boolean =>
  code !== undefined && NOT_A_MEMBER.has(code);

/** Whether Slack's error `code` says the bot cannot post in the channel any more. */
export const isChannelClosed = (code: string | undefined): boolean =>
  code !== undefined && CHANNEL_CLOSED.has(code);

/**
 * Slack errors that no retry can fix for this message: the channel is gone or closed to the
 * bot, or the message itself is unacceptable.
 */
const PERMANENT_ERRORS = new Set([
  ...CHANNEL_CLOSED,
  'msg_too_long',
  'no_text',
  'invalid_blocks',
  'invalid_blocks_format',
  'msg_blocks_too_long',
  'cant_update_message',
  'message_not_found',
  'edit_window_closed',
  'restricted_action',
  'restricted_action_read_only_channel',
  'restricted_action_thread_only_channel',
  'restricted_action_non_threadable_channel',
  'team_access_not_granted',
  'user_not_in_channel',
  'expired_url',
  'invalid_metadata_format',
  'invalid_metadata_schema',
  'metadata_too_large',
  // The app is set up wrongly for this call; an admin must act, retrying cannot help.
  'missing_scope',
  'not_allowed_token_type',
  'unknown_method',
  'method_deprecated',
  'invalid_arguments',
]);

/** A Slack Web API call that failed, with Slack's error code (`not_in_channel`, `http_500`…). */
export class SlackCallError extends Error {
  override name = 'SlackCallError';
  readonly code: string;
  /** No retry can succeed. */
  readonly permanent: boolean;
  /** How long Slack asked us to wait, on a 429. */
  readonly retryAfterMs: number | undefined;
  /** Slack answered `ok: false`: the call surely had no effect. */
  readonly isPlatformError: boolean;

  constructor(
    method: string,
    code: string,
    options: { retryAfterMs?: number; cause?: unknown; platform?: boolean } = {},
  ) {
    super(`Slack ${method} failed: ${code}`, { cause: options.cause });
    this.code = code;
    this.permanent = PERMANENT_ERRORS.has(code);
    this.retryAfterMs = options.retryAfterMs;
    this.isPlatformError = options.platform ?? false;
  }
}

/** An error thrown by a Web API call, as a {@link SlackCallError} with Slack's error code. */
export function toSlackCallError(method: string, error: unknown): SlackCallError {
  if (error instanceof WebAPIPlatformError) {
    return new SlackCallError(method, error.data?.error ?? 'unknown_error', { cause: error, platform: true });
  }
  if (error instanceof WebAPIRateLimitedError) {
    return new SlackCallError(method, 'ratelimited', {
      retryAfterMs: (error.retryAfter ?? 1) * 1000,
      cause: error,
      platform: true,
    });
  }
  if (error instanceof WebAPIHTTPError) {
    return new SlackCallError(method, `http_${error.statusCode ?? 'error'}`, { cause: error });
  }
  if (error instanceof WebAPIRequestError) {
    return new SlackCallError(method, 'request_failed', { cause: error });
  }
  return new SlackCallError(method, 'unexpected_error', { cause: error });
}

/** Longest Retry-After a post waits out in place (a 429 surely posted nothing), in milliseconds. */
export const POST_MAX_RATE_LIMIT_WAIT_MS = 10_000;

/** chat.postMessage is limited to about one message a second per channel: wait a short 429 out. */
export async function withRateLimitWait<T>(fn: () => Promise<T>, tries = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if (!(error instanceof WebAPIRateLimitedError)) throw error;
      const waitMs = (error.retryAfter ?? 1) * 1000;
      if (attempt >= tries || waitMs > POST_MAX_RATE_LIMIT_WAIT_MS) throw error;
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }
}

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
