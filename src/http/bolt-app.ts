import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  App,
  defaultProcessEventErrorHandler,
  HTTPReceiver,
  type Receiver,
  type ReceiverEvent,
  type Logger as SlackLogger,
} from '@slack/bolt';
import type { Config } from '../config/config.js';
import type { Logger } from '../logging/logger.js';
import { slackClientOptions, slackLogger, slackLogLevel } from '../slack/client-options.js';
import type { Identity } from '../slack/identity.js';
import { createSocketConnections } from '../slack/socket-connections.js';
import type { AppTokenRefusedError, SocketEnvelope } from '../slack/socket-mode-client.js';
import type { YieldGate } from '../util/yield-gate.js';
import { answerPlain, countInFlight, createFrontServer, type Route } from './front-server.js';
import { healthzRoute } from './health.js';
import {
  MAX_BODY_BYTES,
  readBody,
  SLACK_BODY_TIMEOUT_MS,
  screenRequest,
  screenRequests,
  signedBySlack,
} from './screening.js';

export interface SlackAppOptions {
  config: Config;
  logger: Logger;
  identity: Identity;
  /**
   * Whether `/healthz` answers 200. In Socket Mode it also takes a connection to Slack open, or
   * lost for less than `SOCKET_LOST_GRACE_MS`.
   */
  isReady: () => boolean;
  /** Further routes served beside `/healthz` (and `/slack/events` in HTTP mode). */
  routes?: readonly Route[];
  /**
   * Told of every request in flight whose signature checked out (HTTP mode), so background work
   * yields to Slack; nothing a stranger sends counts. Socket Mode has no requests to count.
   */
  gate?: YieldGate;
  /** Longest a request's body may take to arrive, in milliseconds; default {@link SLACK_BODY_TIMEOUT_MS}. */
  bodyTimeoutMs?: number;
  /**
   * Socket Mode: told once when Slack refuses the app token on a reconnect. No connection can be
   * opened any more, so the app should stop (a refusal at start makes `start` reject instead).
   */
  onAppTokenRefused?: (error: AppTokenRefusedError) => void;
}

export interface SlackApp {
  app: App;
  /** Starts listening; resolves with the HTTP port (the health port in Socket Mode). */
  start(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Builds the Bolt app: HTTP mode on `/slack/events`, or Socket Mode when an app token is set
 * (over the connections of `slack/socket-connections.ts`), with `/healthz` beside it in both modes. Both modes serve HTTP through the app's own front
 * server, never Bolt's, so every request Bolt would not serve is answered instead of thrown.
 */
export function createSlackApp(options: SlackAppOptions): SlackApp {
  const { config, logger, isReady, routes = [], gate, bodyTimeoutMs = SLACK_BODY_TIMEOUT_MS } = options;
  // Bolt, its receiver and every client built for it (its Web API clients, the Socket Mode
  // clients) log through ours, so redaction applies to their lines too.
  const log = slackLogger(logger, 'bolt', config.logLevel);
  const logLevel = slackLogLevel(config.logLevel);
  const authorize = async () => ({ botToken: config.slack.botToken, ...options.identity.peek() });
  const buildApp = (receiver: Receiver): App => {
    const app = new App({
      receiver,
      authorize,
      // Nothing here keeps state per conversation in Bolt: without its store, no request pays
      // for a look-up in it, and nothing is held in memory per conversation.
      convoStore: false,
      logger: log,
      logLevel,
      clientOptions: slackClientOptions(config, logger, 'bolt'),
    });
    // Before anything of Bolt's: a payload it would fail on is answered, not a 500 or a 3 s 404.
    screenRequests(app, logger);
    app.error(async (error) => {
      logger.error('unhandled error in a listener', { error });
      // Passed on so Slack gets an error answer (HTTP 500) instead of a success for work that
      // was not done: it re-delivers events, and shows a failed command or form as failed.
      throw error;
    });
    return app;
  };

  if (config.slack.appToken !== undefined)
    return socketModeApp(config.slack.appToken, options, buildApp, log);

  const healthz = healthzRoute(isReady);
  const receiver = new HTTPReceiver({
    signingSecret: config.slack.signingSecret as string,
    endpoints: '/slack/events',
    logger: log,
    // Slack is answered after the listener returns: listeners record what arrived first, and
    // hand slow work to the background, so the answer still comes within milliseconds.
    processBeforeResponse: true,
    bodyLimit: MAX_BODY_BYTES,
  });
  const app = buildApp(receiver);
  const refuse = (req: IncomingMessage, res: ServerResponse, refusal: { status: number; reason: string }) => {
    logger.info('request refused before Bolt', { status: refusal.status, reason: refusal.reason });
    res.setHeader('connection', 'close');
    answerPlain(req, res, refusal.status, refusal.reason);
  };
  const signingSecret = config.slack.signingSecret as string;
  const events: Route = {
    method: 'POST',
    path: '/slack/events',
    handle: async (req, res) => {
      const refusal = screenRequest(req);
      if (refusal) return refuse(req, res, refusal);
      // Read here, within a short time, so a stranger's trickle holds nothing for long.
      const read = await readBody(req, { limitBytes: MAX_BODY_BYTES, timeoutMs: bodyTimeoutMs });
      if (read.kind === 'aborted') return;
      if (read.kind === 'timeout')
        return refuse(req, res, { status: 408, reason: 'body not received in time' });
      if (read.kind === 'too_large') return refuse(req, res, { status: 413, reason: 'body too large' });
      // Only Slack's own requests hold background work back while they are answered.
      if (gate && signedBySlack(req, read.body, signingSecret)) countInFlight(gate, req, res);
      // Bolt reads a body already read from `rawBody`, and checks the signature itself.
      Object.assign(req, { rawBody: read.body });
      receiver.requestListener(req, res);
    },
  };
  const front = createFrontServer([events, healthz, ...routes], logger);
  return { app, start: () => front.listen(config.port), stop: () => front.stop() };
}

/**
 * Socket Mode: Bolt fed by the instance's own Socket Mode connections (`slack/socket-connections.ts`)
 * rather than Bolt's receiver, whose one client closes its socket before opening the next and goes
 * deaf when Slack refuses the app token on a reconnect. `/healthz` answers 200 only while a
 * connection is open, or was moments ago.
 */
function socketModeApp(
  appToken: string,
  { config, logger, isReady, routes = [], onAppTokenRefused }: SlackAppOptions,
  buildApp: (receiver: Receiver) => App,
  log: SlackLogger,
): SlackApp {
  let bolt: App | undefined;
  const connections = createSocketConnections({
    appToken,
    logger,
    logLevel: config.logLevel,
    clientOptions: slackClientOptions(config, logger, 'bolt'),
    handle: (envelope) => dispatch(bolt, envelope, log),
    onRefused: (error) => onAppTokenRefused?.(error),
  });
  const app = buildApp({
    init: (initialised) => {
      bolt = initialised;
    },
    start: () => connections.start(),
    stop: () => connections.stop(),
  });
  const front = createFrontServer(
    [healthzRoute(() => isReady() && connections.healthy()), ...routes],
    logger,
  );
  return {
    app,
    async start() {
      const port = await front.listen(config.port);
      try {
        await app.start();
      } catch (error) {
        await front.stop();
        throw error;
      }
      return port;
    },
    async stop() {
      await Promise.all([app.stop(), front.stop()]);
    },
  };
}

/**
 * One envelope through Bolt, as Bolt's own Socket Mode receiver hands it: acknowledged once at
 * most; when Bolt fails, its handler logs why and says whether to acknowledge anyway (an
 * authorization failure: retries cannot help), otherwise Slack delivers the event again.
 */
async function dispatch(app: App | undefined, envelope: SocketEnvelope, log: SlackLogger): Promise<void> {
  let acked = false;
  const event: ReceiverEvent = {
    body: envelope.body,
    retryNum: envelope.retry_num,
    retryReason: envelope.retry_reason,
    customProperties: {},
    ack: async (response?: Record<string, unknown>) => {
      if (acked) return;
      acked = true;
      await envelope.ack(response);
    },
  };
  try {
    await app?.processEvent(event);
  } catch (error) {
    const ackAnyway = await defaultProcessEventErrorHandler({ error: error as Error, logger: log, event });
    if (ackAnyway) await event.ack();
  }
}
