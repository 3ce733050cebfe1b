import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { answerPlain, type Route } from '../http/front-server.js';
import type { Logger } from '../logging/logger.js';
import type { Metrics } from './metrics.js';

export interface MetricsRouteOptions {
  /** The bearer token scrapers must send (`METRICS_TOKEN`). */
  token: string;
  metrics: Pick<Metrics, 'render'>;
  logger: Logger;
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/**
 * `GET /metrics`: the Prometheus text exposition, for requests carrying
 * `Authorization: Bearer <token>`. Anything else gets 401 with `WWW-Authenticate: Bearer`.
 * Tokens are compared as SHA-256 digests in constant time, so neither the time taken nor the
 * length of what was sent tells a guesser how close it came. Nothing a request sends is logged.
 */
export function metricsRoute({ token, metrics, logger }: MetricsRouteOptions): Route {
  const expected = digest(token);
  const authorized = (req: IncomingMessage) => {
    const presented = /^Bearer +([^\s]+) *$/i.exec(req.headers.authorization ?? '')?.[1];
    return presented !== undefined && timingSafeEqual(digest(presented), expected);
  };
  return {
    method: 'GET',
    path: '/metrics',
    async handle(req, res) {
      if (!authorized(req)) {
        logger.debug('metrics request without the right bearer token');
        res.setHeader('www-authenticate', 'Bearer realm="metrics"');
        return answerPlain(req, res, 401, 'unauthorized');
      }
      const { contentType, body } = await metrics.render();
      res.writeHead(200, {
        'content-type': contentType,
        'content-length': Buffer.byteLength(body),
        'cache-control': 'no-store',
      });
      res.end(body);
      req.resume();
    },
  };
}
