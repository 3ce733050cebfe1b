import type { Config } from '../config/config.js';
import { servedProjects } from '../config/projects.js';
import type { Route } from '../http/front-server.js';
import { type MetricsHooks, noMetrics } from '../jobs/metrics-hooks.js';
import type { Logger } from '../logging/logger.js';
import type { ReportsStore, StoreLifecycle } from '../store/types.js';
import { createMetrics } from './metrics.js';
import { metricsRoute } from './metrics-route.js';

/**
 * The metrics of one app start: with `METRICS_TOKEN` set, the hooks that count and the
 * `GET /metrics` route; without it, hooks that do nothing and no route (`/metrics` is a 404).
 */
export function setUpMetrics(
  config: Pick<Config, 'metricsToken' | 'agent' | 'channelProjects' | 'instanceTimeoutMs'>,
  store: ReportsStore & Pick<StoreLifecycle, 'shared'>,
  logger: Logger,
): { hooks: MetricsHooks; routes: Route[] } {
  if (config.metricsToken === undefined) return { hooks: noMetrics, routes: [] };
  const metrics = createMetrics({
    read: (usesSince, instanceTimeoutMs) => store.figures(usesSince, instanceTimeoutMs),
    shared: store.shared,
    projects: servedProjects(config),
    instanceTimeoutMs: config.instanceTimeoutMs,
    logger,
  });
  return { hooks: metrics.hooks, routes: [metricsRoute({ token: config.metricsToken, metrics, logger })] };
}
