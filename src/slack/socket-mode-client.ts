import type { Logger as SlackLogger } from '@slack/bolt';
import { SocketModeClient } from '@slack/socket-mode';
import { z } from 'zod';
import type { Logger, LogLevel } from '../logging/logger.js';
import { toSlackCallError } from './caller.js';
import { slackLogger } from './client-options.js';

/** `apps.connections.open` errors that no retry fixes: Slack will not take this app token. */
const REFUSALS = new Set([
  'invalid_auth',
  'not_authed',
  'token_revoked',
  'token_expired',
  'account_inactive',
  'team_disabled',
  'missing_scope',
  'not_allowed_token_type',
]);

/** Slack refused the app-level token: only a new `SLACK_APP_TOKEN` (and a restart) helps. */
export class AppTokenRefusedError extends Error {
  override name = 'AppTokenRefusedError';
  /** Slack's error code, e.g. `invalid_auth` or `token_revoked`. */
  readonly code: string;

  constructor(code: string) {
    super(
      `Slack refused SLACK_APP_TOKEN (${code}) when asked for a Socket Mode connection: create an ` +
        'app-level token with connections:write (the app’s Basic Information, App-Level Tokens), set ' +
        'SLACK_APP_TOKEN to it and restart. The bot token is not at fault.',
    );
    this.code = code;
  }
}

/** One envelope as the client hands it on (`slack_event`): to be handled, and acknowledged. */
export interface SocketEnvelope {
  ack: (response?: Record<string, unknown>) => Promise<void>;
  envelope_id: string;
  type: string;
  body: Record<string, unknown>;
  retry_num?: number;
  retry_reason?: string;
}

const disconnectMessage = z.object({ type: z.literal('disconnect'), reason: z.string().max(100) });

/** The reason of Slack's `disconnect` message; undefined for any other message. */
export function disconnectReason(data: string | ArrayBuffer, isBinary: boolean): string | undefined {
  // Envelopes are most messages, and large: only a short text naming `disconnect` is parsed.
  if (isBinary || typeof data !== 'string' || data.length > 1_000 || !data.includes('"disconnect"')) {
    return undefined;
  }
  try {
    const parsed = disconnectMessage.safeParse(JSON.parse(data));
    return parsed.success ? parsed.data.reason : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The Socket Mode client, except that Slack's `disconnect` message is first offered to
 * `onDisconnectAsked`. On its own the client closes its socket at once and opens the next one
 * 5 s after it closed: everything Slack sent in between was lost, commands included.
 */
export class RefreshableClient extends SocketModeClient {
  /** Returns true when it took the request on: the client then leaves its socket open. */
  onDisconnectAsked: (reason: string) => boolean = () => false;

  protected override async onWebSocketMessage(data: string | ArrayBuffer, isBinary: boolean): Promise<void> {
    const reason = disconnectReason(data, isBinary);
    if (reason !== undefined && this.onDisconnectAsked(reason)) return;
    return super.onWebSocketMessage(data, isBinary);
  }
}

/** How the client starts its debug line for every message Slack sends over the socket. */
const RAW_MESSAGE = 'Received a message on the WebSocket: ';

/**
 * A raw Socket Mode message told by what it is, never by what it holds: an envelope carries
 * what people wrote, a step's token and a verified person's `secret`, none of which may be logged.
 */
function rawMessageSummary(line: string): string {
  let fields: { type?: unknown; envelope_id?: unknown } = {};
  try {
    const parsed: unknown = JSON.parse(line.slice(RAW_MESSAGE.length));
    if (parsed && typeof parsed === 'object') fields = parsed;
  } catch {
    // Not JSON: only its length is told.
  }
  const said = (value: unknown) => (typeof value === 'string' ? value.slice(0, 64) : 'unknown');
  return `Received a Socket Mode message (type ${said(fields.type)}, envelope ${said(fields.envelope_id)}, ${line.length - RAW_MESSAGE.length} characters)`;
}

/**
 * The client's own lines through ours. While its connection is being closed on purpose, its
 * warnings and errors are about that closing (Slack leaving the close handshake unfinished, a
 * late pong): routine, so written at debug. Its debug line of each raw message is summarised.
 */
export function clientLogger(logger: Logger, level: LogLevel, closing: () => boolean): SlackLogger {
  const lines = slackLogger(logger, 'bolt', level);
  return {
    ...lines,
    debug: (...parts: unknown[]) => {
      const [first] = parts;
      if (typeof first === 'string' && first.startsWith(RAW_MESSAGE)) lines.debug(rawMessageSummary(first));
      else lines.debug(...parts);
    },
    warn: (...parts: unknown[]) => (closing() ? lines.debug(...parts) : lines.warn(...parts)),
    error: (...parts: unknown[]) => (closing() ? lines.debug(...parts) : lines.error(...parts)),
  };
}

/** The refusal of the app token an `apps.connections.open` failure is, if it is one. */
export function refusalOf(error: unknown): AppTokenRefusedError | undefined {
  const { code, isPlatformError } = toSlackCallError('apps.connections.open', error);
  return isPlatformError && REFUSALS.has(code) ? new AppTokenRefusedError(code) : undefined;
}
