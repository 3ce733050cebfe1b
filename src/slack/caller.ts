import {
  WebAPIHTTPError,
  WebAPIPlatformError,
  WebAPIRateLimitedError,
  WebAPIRequestError,
  type WebClient,
} from '@slack/web-api';
import { type Logger, type Redact, redactDeep } from '../logging/logger.js';
import { createSlackLimits, type SlackLimits, scopeOf } from './limits.js';

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
  /** The call was never made: deferred while Slack's limit for it runs (`slack/limits.ts`). */
  readonly deferred: boolean;

  constructor(
    method: string,
    code: string,
    options: { retryAfterMs?: number; cause?: unknown; platform?: boolean; deferred?: boolean } = {},
  ) {
    super(`Slack ${method} ${options.deferred ? 'deferred' : 'failed'}: ${code}`, { cause: options.cause });
    this.code = code;
    this.permanent = PERMANENT_ERRORS.has(code);
    this.retryAfterMs = options.retryAfterMs;
    this.isPlatformError = (options.platform ?? false) || (options.deferred ?? false);
    this.deferred = options.deferred ?? false;
  }
}

/** Slack's refusals that a later attempt may get past: any other `ok: false` will be refused again. */
const PASSING = new Set([
  'ratelimited',
  'internal_error',
  'fatal_error',
  'service_unavailable',
  'request_timeout',
]);

/**
 * Whether a later attempt of the call may succeed: it never reached Slack or got no answer, was
 * deferred or rate limited, or Slack was down.
 */
export const mayPassLater = (error: SlackCallError): boolean =>
  !error.isPlatformError || PASSING.has(error.code);

/**
 * Slack's error code as it is passed on (to logs, metrics' labels, a person's note): one of
 * Slack's words, never whatever an answer that was not Slack's held (a proxy's page, a body cut
 * short), which the client hands over as the code.
 */
const slackCode = (said: unknown): string =>
  typeof said === 'string' && /^[a-z0-9_.]{1,80}$/i.test(said)
    ? said
    : said === undefined
      ? 'unknown_error'
      : 'invalid_response';

/** An error thrown by a Web API call, as a {@link SlackCallError} with Slack's error code. */
export function toSlackCallError(method: string, error: unknown): SlackCallError {
  if (error instanceof WebAPIPlatformError) {
    return new SlackCallError(method, slackCode(error.data?.error), { cause: error, platform: true });
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

/** Calls one post makes at most while it waits out short rate limits in place. */
const POST_TRIES = 3;

/** How a call keeps to Slack's limits (see `slack/limits.ts`). */
export interface CallLimits {
  /** The channel a post goes to: `chat.postMessage` is limited per channel. */
  channel?: string;
  /**
   * Longest wait for Slack's limit done in place, instead of failing at once (a post: about a
   * second per channel), with at most {@link POST_TRIES} calls. Default 0: fail at once, for the
   * outbox to deliver again when the limit allows.
   */
  waitMs?: number;
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
  call<A, T>(
    method: string,
    args: A,
    send: (client: WebClient, args: A) => Promise<T>,
    limits?: CallLimits,
  ): Promise<T>;
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
  /** The process's picture of Slack's limits, shared by every call; default a fresh one. */
  limits?: SlackLimits;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function createSlackCaller(options: SlackCallerOptions): SlackCaller {
  const { client, logger, redact, onError } = options;
  const limits = options.limits ?? createSlackLimits();
  const mask = <T>(value: T): T => redactDeep(value, redact);
  return {
    mask,
    async call(method, args, send, { channel, waitMs = 0 } = {}) {
      const masked = mask(args);
      const scope = scopeOf(method, channel);
      for (let calls = 0, waits = 0; ; ) {
        const wait = limits.turn(method, scope);
        if (wait > 0) {
          if (wait > waitMs || waits++ >= POST_TRIES) {
            logger.debug('Slack call deferred by its rate limit', { method, retryInMs: wait });
            throw new SlackCallError(method, 'ratelimited', { retryAfterMs: wait, deferred: true });
          }
          await sleep(wait);
          continue;
        }
        try {
          calls++;
          return await send(client, masked);
        } catch (error) {
          const typed = error instanceof SlackCallError ? error : toSlackCallError(method, error);
          // Slack's 429 says how long to wait: nothing in that scope is called until then.
          if (typed.retryAfterMs !== undefined && !typed.deferred) limits.refused(scope, typed.retryAfterMs);
          logger.debug('Slack call failed', { method, code: typed.code });
          onError?.(method, typed.code);
          const waitable =
            waitMs > 0 && typed.retryAfterMs !== undefined && !typed.deferred && typed.retryAfterMs <= waitMs;
          if (!waitable || calls >= POST_TRIES) throw typed;
        }
      }
    },
  };
}
