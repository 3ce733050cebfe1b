import type { WebClientOptions } from '@slack/web-api';
import type { Logger, LogLevel } from '../logging/logger.js';
import { backoffMs, withTimeout } from '../util/loop.js';
import { toSlackCallError } from './caller.js';
import {
  AppTokenRefusedError,
  clientLogger,
  RefreshableClient,
  refusalOf,
  type SocketEnvelope,
} from './socket-mode-client.js';

/**
 * How long `/healthz` keeps answering 200 with no Socket Mode connection open, in milliseconds.
 * A connection that closes is replaced at once: one attempt is an `apps.connections.open` call
 * (at most `SLACK_CALL_TIMEOUT_MS`, 10 s) and a WebSocket handshake, bounded together by
 * {@link OPEN_ATTEMPT_MS}; a routine reconnect takes well under a second. 30 s is an attempt
 * that runs to its limit and a second one after a one-second pause: past that, the instance
 * is deaf, not reconnecting.
 */
export const SOCKET_LOST_GRACE_MS = 30_000;

/** Longest one attempt to open a connection may take, until Slack's `hello`, in milliseconds. */
export const OPEN_ATTEMPT_MS = 15_000;

/** How long a replaced connection stays open for envelopes still being handled: Slack's 3 s to acknowledge. */
const DRAIN_MS = 3_000;

/** The pause after a failed attempt: 1 s, doubling with each further failure, at most 30 s. */
const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 30_000;

/** Longest `stop` waits for Slack to answer the close frames, in milliseconds. */
const CLOSE_WAIT_MS = 1_000;

/** `disconnect` reasons Slack sends while it keeps the connection open a little longer. */
const ROUTINE_REASONS = new Set(['refresh_requested', 'warning']);

export interface SocketConnectionsOptions {
  appToken: string;
  logger: Logger;
  logLevel: LogLevel;
  /** The options of the Web API client that calls `apps.connections.open` (address, time-out, logger). */
  clientOptions: WebClientOptions;
  /** Handles one envelope, acknowledging it through its `ack`; resolves once it is handled. */
  handle: (envelope: SocketEnvelope) => Promise<void>;
  /** Told once when Slack refuses the app token after start: no connection can be opened any more. */
  onRefused: (error: AppTokenRefusedError) => void;
  /** The clock, in milliseconds; default `Date.now`. */
  now?: () => number;
}

/** Slack's Socket Mode connections of one instance, kept open. */
export interface SocketConnections {
  /**
   * Opens the first connection: rejects with {@link AppTokenRefusedError} when Slack refuses the
   * app token, or with the cause of any other failure. From then on a connection that closes is
   * replaced, and one Slack asks to replace is replaced before it closes.
   */
  start(): Promise<void>;
  /** Closes every connection (waiting at most 1 s for Slack's answers) and opens none again. */
  stop(): Promise<void>;
  /**
   * Whether a connection is open, or was less than {@link SOCKET_LOST_GRACE_MS} ago; false for
   * good once Slack refused the app token.
   */
  healthy(): boolean;
}

interface Connection {
  id: number;
  client: RefreshableClient;
  /** Slack said hello over it, and it has not closed since. */
  open: boolean;
  /** Why Slack asked for it to be replaced, once it did. */
  replaceAsked?: string;
  /** Being closed on purpose: what its client reports about closing is routine. */
  closing: boolean;
  /** Envelopes it delivered whose handling has not finished. */
  inFlight: number;
  idle?: () => void;
}

/**
 * Keeps one Socket Mode connection open for the instance, two for the moment a replacement
 * takes: Slack spreads envelopes over every open connection of the app, so while both are open
 * nothing is lost, and the old one is closed once what it delivered has been handled. The
 * client's own reconnecting is off: it left a refused app token as an unhandled rejection and
 * the process deaf.
 */
export function createSocketConnections(options: SocketConnectionsOptions): SocketConnections {
  const { logger, now = Date.now } = options;
  const log = logger.child({ component: 'socket-mode' });
  const connections = new Set<Connection>();
  let ids = 0;
  let stopping = false;
  let refused: AppTokenRefusedError | undefined;
  /** When the last open connection closed; undefined while one is open, and before the first. */
  let lostAt: number | undefined;
  let wake = () => {};
  let cancelPause = () => {};

  const openCount = () => [...connections].filter((c) => c.open).length;
  /** The connection that serves: open, and neither asked to be replaced nor closing. */
  const serving = () => [...connections].find((c) => c.open && c.replaceAsked === undefined && !c.closing);

  function connect(): Connection {
    const conn: Connection = { id: ++ids, open: false, closing: false, inFlight: 0 } as Connection;
    conn.client = new RefreshableClient({
      appToken: options.appToken,
      logger: clientLogger(logger, options.logLevel, () => conn.closing),
      autoReconnectEnabled: false,
      clientOptions: options.clientOptions,
    });
    conn.client.onDisconnectAsked = (reason) => disconnectAsked(conn, reason);
    conn.client.on('connected', () => opened(conn));
    conn.client.on('close', () => closed(conn));
    conn.client.on('slack_event', (envelope: SocketEnvelope) => handle(conn, envelope));
    connections.add(conn);
    return conn;
  }

  function opened(conn: Connection) {
    // Opened after all: the client finishes an attempt that `stop` interrupted.
    if (stopping) {
      discard(conn);
      return;
    }
    conn.open = true;
    lostAt = undefined;
  }

  function closed(conn: Connection) {
    connections.delete(conn);
    if (!conn.open) return;
    conn.open = false;
    if (openCount() === 0) lostAt = now();
    if (!conn.closing && !stopping) {
      log.info('Socket Mode connection closed; opening another', {
        connection: conn.id,
        replaceAsked: conn.replaceAsked,
      });
    }
    wake();
  }

  function disconnectAsked(conn: Connection, reason: string): boolean {
    if (!ROUTINE_REASONS.has(reason)) {
      if (reason === 'link_disabled') {
        log.error(
          'Slack turned Socket Mode off for this app (link_disabled); reconnecting until it is on again',
          {
            connection: conn.id,
          },
        );
      } else log.warn('Slack closes a Socket Mode connection', { connection: conn.id, reason });
      // The client closes it now; it is replaced like any connection that closes.
      return false;
    }
    if (conn.replaceAsked === undefined) {
      conn.replaceAsked = reason;
      log.info('Slack asked for a new Socket Mode connection; opening it before this one closes', {
        connection: conn.id,
        reason,
      });
      wake();
    }
    return true;
  }

  async function handle(conn: Connection, envelope: SocketEnvelope) {
    conn.inFlight += 1;
    try {
      await options.handle(envelope);
    } catch (error) {
      log.error('a Socket Mode envelope could not be handled', { error, type: envelope.type });
    } finally {
      conn.inFlight -= 1;
      if (conn.inFlight === 0) conn.idle?.();
    }
  }

  function discard(conn: Connection) {
    conn.closing = true;
    connections.delete(conn);
    void conn.client.disconnect();
  }

  /** One attempt: a connection that Slack said hello over, or why not. */
  async function openOnce(): Promise<Connection> {
    const conn = connect();
    const started = conn.client.start().then(() => true);
    // A late failure, after the attempt was given up, is nobody's: it must not go unhandled.
    started.catch(() => undefined);
    let hello: boolean | undefined;
    try {
      hello = await withTimeout(started, OPEN_ATTEMPT_MS);
    } catch (error) {
      discard(conn);
      throw refusalOf(error) ?? error ?? new Error('the connection closed before Slack said hello');
    }
    if (!hello) {
      discard(conn);
      throw new Error(`Slack did not say hello within ${OPEN_ATTEMPT_MS} ms`);
    }
    return conn;
  }

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      cancelPause = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  /** Attempts until one opens, pausing longer after each failure; a refused app token ends it. */
  async function openWithRetries(): Promise<void> {
    for (let failures = 1; !stopping; failures += 1) {
      try {
        const conn = await openOnce();
        log.info('Socket Mode connection open', { connection: conn.id, open: openCount() });
        return;
      } catch (error) {
        if (error instanceof AppTokenRefusedError || stopping) throw error;
        const { retryAfterMs = 0 } = toSlackCallError('apps.connections.open', error);
        const retryInMs = Math.max(backoffMs(RETRY_FIRST_MS, failures, RETRY_MAX_MS), retryAfterMs);
        log.warn('could not open a Socket Mode connection; trying again', { error, failures, retryInMs });
        await pause(retryInMs);
      }
    }
  }

  /** Closes a replaced connection once what it delivered is handled (at most {@link DRAIN_MS}). */
  async function retire(conn: Connection) {
    conn.closing = true;
    if (conn.inFlight > 0) {
      await withTimeout(
        new Promise<void>((resolve) => {
          conn.idle = resolve;
        }),
        DRAIN_MS,
      );
    }
    await conn.client.disconnect();
    log.info('replaced Socket Mode connection closed', { connection: conn.id, reason: conn.replaceAsked });
  }

  /** Keeps one connection serving; runs from the first connection until `stop` or a refusal. */
  async function supervise() {
    while (!stopping) {
      const current = serving();
      if (!current) {
        await openWithRetries();
        continue;
      }
      for (const conn of connections) if (conn !== current && conn.open && !conn.closing) void retire(conn);
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  }

  function supervisionEnded(error: unknown) {
    if (stopping) return;
    if (error instanceof AppTokenRefusedError) {
      refused = error;
      options.onRefused(error);
    } else log.error('Socket Mode connections are no longer looked after', { error });
  }

  return {
    async start() {
      stopping = false;
      const conn = await openOnce();
      log.info('Socket Mode connection open', { connection: conn.id, open: openCount() });
      supervise().catch(supervisionEnded);
    },
    async stop() {
      stopping = true;
      cancelPause();
      wake();
      const closing = [...connections].map((conn) => {
        conn.closing = true;
        return conn.client.disconnect();
      });
      await withTimeout(Promise.all(closing), CLOSE_WAIT_MS);
    },
    healthy() {
      if (refused) return false;
      if (openCount() > 0) return true;
      return lostAt !== undefined && now() - lostAt < SOCKET_LOST_GRACE_MS;
    },
  };
}
