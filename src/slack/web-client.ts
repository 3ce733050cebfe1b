import { STATUS_CODES } from 'node:http';
import { stringify } from 'node:querystring';
import type { Logger as SlackLogger } from '@slack/bolt';
import {
  type WebAPICallResult,
  WebAPIHTTPError,
  WebAPIPlatformError,
  WebAPIRateLimitedError,
  WebAPIRequestError,
  WebClient,
  type WebClientOptions,
} from '@slack/web-api';
import { httpRequest, textOf } from '../util/http-request.js';

/**
 * The bot's own Web API client: Slack's `WebClient`, with each plain call (form fields in, JSON
 * out) made at once over undici's `request`: the same request, and the answers and errors its
 * callers read (`WebAPIPlatformError`, `WebAPIRateLimitedError`, `WebAPIHTTPError`,
 * `WebAPIRequestError`), as `WebClient` gives them.
 *
 * `WebClient.apiCall` sends every call through a request queue and a retry wrapper (retries are
 * off here: the outbox owns them, see `client-options.ts`), and builds three redacted JSON copies
 * of the request and its answer for debug lines, whether or not debug logging is on. On the path
 * of every job (the status card's post and edits, the session status, the outcome's post) that
 * was most of a call's CPU. What goes with them: those debug lines, its warnings about a message
 * without `text` or a deprecated method, its `rate_limited` event (Slack's `Retry-After` is in the
 * error), and its queue's 100 calls at once (the HTTP client holds 100 connections to a host). An
 * answer that is JSON but no object (WebClient fails reading it) is an error of the request's.
 *
 * File uploads, calls to a full URL, and a client made with retries or without
 * `rejectRateLimitedCalls` (unlike {@link slackClientOptions}) go through `WebClient` as they are.
 */
export class BotWebClient extends WebClient {
  readonly #headers: Record<string, string>;
  readonly #timeoutMs: number;
  readonly #teamId: string | undefined;
  readonly #log: SlackLogger | undefined;
  /** Made as `slackClientOptions` makes it: a 429 thrown at once, no retries. */
  readonly #direct: boolean;

  constructor(token: string, options: WebClientOptions) {
    super(token, options);
    this.#direct = options.rejectRateLimitedCalls === true && options.retryConfig?.retries === 0;
    // The headers WebClient built for every request (its user agent, `Accept`, the token): sent
    // as they are, so Slack sees one client whichever path a call takes (checked by its test).
    this.#headers = { ...(this as unknown as { defaultHeaders: Record<string, string> }).defaultHeaders };
    this.#timeoutMs = options.timeout ?? 0;
    this.#teamId = options.teamId;
    this.#log = options.logger;
  }

  override async apiCall(method: string, options: Record<string, unknown> = {}): Promise<WebAPICallResult> {
    if (!this.#direct || !isPlainCall(method, options)) return super.apiCall(method, options);
    const fields = formFields({ team_id: this.#teamId, ...options });
    const headers: Record<string, string> = {
      ...this.#headers,
      'Content-Type': 'application/x-www-form-urlencoded',
      ...(typeof options.token === 'string' ? { Authorization: `Bearer ${options.token}` } : {}),
    };
    const url = `${this.slackApiUrl}${method}`;
    let answer: Awaited<ReturnType<typeof httpRequest>>;
    let text: string;
    try {
      answer = await httpRequest(url, {
        method: 'POST',
        headers,
        body: stringify(fields),
        redirect: 'error',
        ...(this.#timeoutMs > 0 ? { signal: AbortSignal.timeout(this.#timeoutMs) } : {}),
      });
      text = textOf((await answer.body).bytes);
    } catch (error) {
      const cause = error instanceof Error ? error : new Error(String(error));
      this.#log?.warn('http request failed', cause.message);
      throw new WebAPIRequestError(cause);
    }
    if (answer.status === 429) {
      const retryAfter = retryAfterOf(answer.header);
      if (retryAfter === undefined)
        throw new Error(
          `Retry header did not contain a valid timeout (url: ${url}, retry-after header: ${answer.header('retry-after')})`,
        );
      throw new WebAPIRateLimitedError(retryAfter);
    }
    if (answer.status !== 200)
      throw new WebAPIHTTPError(
        answer.status,
        STATUS_CODES[answer.status] ?? '',
        Object.fromEntries(answer.headers()),
        text,
      );
    const result = readResult(text, answer.header);
    this.#tellWarnings(result);
    if (!result.ok) throw new WebAPIPlatformError(result as WebAPICallResult & { error: string });
    return result;
  }

  /** Slack's warnings in an answer's metadata, logged as `WebClient` logs them. */
  #tellWarnings(result: WebAPICallResult): void {
    const metadata = result.response_metadata;
    for (const warning of metadata?.warnings ?? []) this.#log?.warn(warning);
    for (const message of metadata?.messages ?? []) {
      const said = /\[(ERROR|WARN)\](.*)/.exec(message);
      if (said?.[1] === 'ERROR') this.#log?.error(String(said[2]).trim());
      else if (said?.[1] === 'WARN') this.#log?.warn(String(said[2]).trim());
    }
  }
}

/** A call of form fields: not a file upload, not a full URL, no binary data (a `Buffer`, as `WebClient` tells it) among its arguments. */
function isPlainCall(method: string, options: unknown): options is Record<string, unknown> {
  if (typeof options !== 'object' || options === null) return false;
  if (method === 'files.uploadV2' || /^https?:\/\//.test(method)) return false;
  return !Object.values(options).some((value) => Buffer.isBuffer(value));
}

/** The form `WebClient` sends: absent fields left out, anything but text, numbers and booleans as JSON. */
function formFields(options: Record<string, unknown>): Record<string, string | number | boolean> {
  const fields: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined || value === null) continue;
    fields[key] =
      typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
        ? value
        : JSON.stringify(value);
  }
  return fields;
}

/** An answer as `WebClient` reads it: JSON, or not JSON as a refusal saying what came. */
function readResult(text: string, header: (name: string) => string | null): WebAPICallResult {
  let data: WebAPICallResult;
  try {
    data = JSON.parse(text) as WebAPICallResult;
  } catch {
    data = { ok: false, error: text } as WebAPICallResult;
  }
  if (typeof data !== 'object' || data === null) throw new TypeError('Slack answered JSON that is no object');
  data.response_metadata ??= {};
  const scopes = header('x-oauth-scopes');
  if (scopes !== null) data.response_metadata.scopes = scopes.trim().split(/\s*,\s*/);
  const accepted = header('x-accepted-oauth-scopes');
  if (accepted !== null) data.response_metadata.acceptedScopes = accepted.trim().split(/\s*,\s*/);
  const retryAfter = retryAfterOf(header);
  if (retryAfter !== undefined) data.response_metadata.retryAfter = retryAfter;
  return data;
}

/** Slack's `Retry-After` in whole seconds, as `WebClient` reads it; undefined when absent or not a number. */
function retryAfterOf(header: (name: string) => string | null): number | undefined {
  const seconds = Number.parseInt(header('retry-after') ?? '', 10);
  return Number.isNaN(seconds) ? undefined : seconds;
}
