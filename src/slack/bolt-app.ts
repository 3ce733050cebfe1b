import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { App, HTTPReceiver, LogLevel, SocketModeReceiver } from '@slack/bolt';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { Identity } from './identity.js';

type BoltApp = App;

/** Largest request body accepted on /slack/events. Slack's own payloads stay far below. */
export const MAX_BODY_BYTES = 256 * 1024;

/** Bolt logs through ours, so redaction applies to its lines too. */
function boltLogger(logger: Logger) {
  const log = logger.child({ component: 'bolt' });
  const join = (msg: unknown[]) => msg.map((m) => (typeof m === 'string' ? m : JSON.stringify(m))).join(' ');
  let level = LogLevel.INFO;
  return {
    debug: (...msg: unknown[]) => log.debug(join(msg)),
    info: (...msg: unknown[]) => log.info(join(msg)),
    warn: (...msg: unknown[]) => log.warn(join(msg)),
    error: (...msg: unknown[]) => log.error(join(msg)),
    setLevel: (l: typeof level) => {
      level = l;
    },
    getLevel: () => level,
    setName: () => {},
  };
}

export interface SlackAppOptions {
  config: Config;
  logger: Logger;
  identity: Identity;
  /** Whether `/healthz` answers 200. */
  isReady: () => boolean;
}

export interface SlackApp {
  app: BoltApp;
  /** Starts listening; resolves with the HTTP port (the health port in Socket Mode). */
  start(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Builds the Bolt app: HTTP mode on `/slack/events`, or Socket Mode when an app token is set,
 * with `/healthz` beside it in both modes.
 */
export function createSlackApp({ config, logger, identity, isReady }: SlackAppOptions): SlackApp {
  const healthz = {
    path: '/healthz',
    method: ['GET'],
    handler: (_req: unknown, res: import('node:http').ServerResponse) => {
      const ready = isReady();
      res.writeHead(ready ? 200 : 503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: ready ? 'ok' : 'unavailable' }));
    },
  };
  const log = boltLogger(logger);

  const authorize = async () => ({ botToken: config.slack.botToken, ...identity.peek() });

  const socketMode = config.slack.appToken !== undefined;
  if (socketMode) {
    const receiver = new SocketModeReceiver({
      appToken: config.slack.appToken as string,
      logger: log,
      customRoutes: [healthz],
      installerOptions: { port: config.port, clientOptions: { slackApiUrl: config.slack.apiUrl } },
    });
    const app = buildApp(receiver);
    return {
      app,
      async start() {
        await app.start();
        const server = (receiver as unknown as { httpServer?: Server }).httpServer;
        return (server?.address() as AddressInfo | null)?.port ?? config.port;
      },
      stop: async () => {
        await app.stop();
      },
    };
  }

  const receiver = new HTTPReceiver({
    signingSecret: config.slack.signingSecret as string,
    endpoints: '/slack/events',
    customRoutes: [healthz],
    logger: log,
    // Slack is answered after the listener returns: listeners record what arrived first, and
    // hand slow work to the background, so the answer still comes within milliseconds.
    processBeforeResponse: true,
    bodyLimit: MAX_BODY_BYTES,
  });
  const app = buildApp(receiver);
  // Our own server in front of Bolt's request listener, for the checks Bolt leaves out.
  let stopping = false;
  const server = createServer((req, res) => {
    // While stopping, requests already on a kept-alive connection are still answered, but the
    // connection closes after each, so clients (and Slack) go to another instance.
    if (stopping) res.setHeader('connection', 'close');
    const refusal = screenRequest(req);
    if (refusal) {
      logger.info('request refused before Bolt', { status: refusal.status, reason: refusal.reason });
      res.writeHead(refusal.status, { 'content-type': 'text/plain', connection: 'close' });
      res.end(refusal.reason);
      req.resume();
      return;
    }
    receiver.requestListener(req, res);
  });
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.headersTimeout = REQUEST_TIMEOUT_MS;

  return {
    app,
    start: () =>
      new Promise<number>((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.port, () => resolve((server.address() as AddressInfo).port));
      }),
    stop: () =>
      new Promise<void>((resolve) => {
        stopping = true;
        const force = setTimeout(() => server.closeAllConnections(), STOP_GRACE_MS);
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };

  function buildApp(receiver: HTTPReceiver | SocketModeReceiver): App {
    const app = new App({
      receiver,
      authorize,
      logger: log,
      clientOptions: { slackApiUrl: config.slack.apiUrl },
    });
    app.error(async (error) => {
      logger.error('unhandled error in a listener', { error });
      // Passed on so Slack gets an error answer (HTTP 500) instead of a success for work that
      // was not done: it re-delivers events, and shows a failed command or form as failed.
      throw error;
    });
    return app;
  }
}

/** How long requests in flight may take to be answered once the server stops, in milliseconds. */
export const STOP_GRACE_MS = 3_000;
/** Longest a client may take to send one request, in milliseconds. */
export const REQUEST_TIMEOUT_MS = 30_000;
/** Slack refuses to sign for more than five minutes either way; so do we. */
export const MAX_CLOCK_SKEW_S = 5 * 60;
const BODY_TYPES = ['application/x-www-form-urlencoded', 'application/json'];

/** Refuses what Bolt's own checks let through: far-future timestamps, unknown body types, huge bodies. */
export function screenRequest(
  req: IncomingMessage,
  nowMs = Date.now(),
): { status: number; reason: string } | undefined {
  if (req.method !== 'POST' || !req.url?.startsWith('/slack/events')) return undefined;
  const timestamp = Number(req.headers['x-slack-request-timestamp']);
  if (!req.headers['x-slack-signature'] || !Number.isFinite(timestamp)) {
    return { status: 401, reason: 'missing request signature' };
  }
  if (Math.abs(nowMs / 1000 - timestamp) > MAX_CLOCK_SKEW_S) {
    return { status: 401, reason: 'stale or future request timestamp' };
  }
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (!BODY_TYPES.includes(type)) return { status: 415, reason: 'unsupported content type' };
  const length = Number(req.headers['content-length'] ?? 0);
  if (length > MAX_BODY_BYTES) return { status: 413, reason: 'body too large' };
  return undefined;
}
