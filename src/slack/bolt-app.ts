import type { Server } from 'node:http';
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

  const authorize = async () => ({ botToken: config.slack.botToken, ...(await identity.get()) });

  const socketMode = config.slack.appToken !== undefined;
  const receiver = socketMode
    ? new SocketModeReceiver({
        appToken: config.slack.appToken as string,
        logger: log,
        customRoutes: [healthz],
        installerOptions: { port: config.port, clientOptions: { slackApiUrl: config.slack.apiUrl } },
      })
    : new HTTPReceiver({
        signingSecret: config.slack.signingSecret as string,
        endpoints: '/slack/events',
        customRoutes: [healthz],
        logger: log,
        processBeforeResponse: false,
        bodyLimit: MAX_BODY_BYTES,
      });

  const app = new App({
    receiver,
    authorize,
    logger: log,
    clientOptions: { slackApiUrl: config.slack.apiUrl },
  });
  app.error(async (error) => {
    logger.error('unhandled error in a listener', { error });
  });

  return {
    app,
    async start() {
      if (socketMode) {
        await app.start();
        const server = (receiver as unknown as { httpServer?: Server }).httpServer;
        return (server?.address() as AddressInfo | null)?.port ?? config.port;
      }
      const server = (await app.start(config.port)) as Server;
      return (server.address() as AddressInfo).port;
    },
    async stop() {
      await app.stop();
    },
  };
}
