import { buildFoundation, buildReceiver, buildSlackSide, buildWork, type StartOptions } from './app-build.js';
import { runningParts } from './app-parts.js';
import { createMembership } from './cluster/membership.js';
import type { Config } from './config/config.js';
import { carryOnOrphans } from './jobs/carry-on.js';
import type { Logger } from './logging/logger.js';
import type { Store } from './store/types.js';
import { startParts, stopParts } from './util/parts.js';
import { createTaskTracker } from './util/tasks.js';
import { warmStart } from './warm-start.js';

export type { StartOptions } from './app-build.js';

export interface RunningApp {
  /** The HTTP port actually bound. */
  port: number;
  store: Store;
  logger: Logger;
  /** Background tasks running or queued right now: read-only, for observers waiting for quiet. */
  readonly backgroundTasks: number;
  /** Stops taking work, lets in-flight work finish (bounded), closes the store. */
  stop(): Promise<void>;
}

/**
 * Wires every part together and starts serving: the build sections (`app-build.ts`) in order,
 * then the running parts (`app-parts.ts`) started forward; `stop` runs them backward.
 */
export async function startApp(config: Config, options: StartOptions = {}): Promise<RunningApp> {
  const base = await buildFoundation(config, options);
  const { logger, store, instanceId, metrics } = base;
  const side = buildSlackSide(base);
  const { identity } = side;
  const tasks = createTaskTracker(logger, { gate: base.gate, ...options.tasks });
  const membership = createMembership({
    store,
    instanceId,
    timeoutMs: config.instanceTimeoutMs,
    logger,
    onOrphans: carryOnOrphans(tasks, () => work.jobs),
    // While every slot is taken, what waits stays in the store for a later round.
    canTakeOver: () => tasks.hasRoom,
    onClockOffset: (offsetMs) => metrics.hooks.clockOffset(offsetMs / 1000),
  });
  const work = buildWork(base, side, tasks, membership);
  const { outbox, poller, retention, checkpoints, health, jobs } = work;
  let ready = false;
  const slackApp = buildReceiver(base, side, work, tasks, () => ready);

  const running = runningParts({
    logger,
    store,
    membership,
    receiver: slackApp,
    warm: (port) =>
      warmStart({
        store,
        logger,
        instanceId,
        pollIntervalMs: config.poll.intervalMs,
        identity,
        port,
        signingSecret: config.slack.appToken === undefined ? config.slack.signingSecret : undefined,
      }),
    loops: [outbox, poller, retention, checkpoints],
    health,
    jobs,
    tasks,
    ready(port, warmUp) {
      ready = true;
      logger.info('docs-agent is ready', {
        mode: config.slack.appToken ? 'socket' : 'http',
        port,
        instanceId,
        pollIntervalMs: config.poll.intervalMs,
        metrics: metrics.routes.length > 0,
        warmUp,
      });
    },
    unready: () => {
      ready = false;
    },
  });
  await startParts(running.parts);

  let stopped: Promise<void> | undefined;
  return {
    port: running.port(),
    store,
    logger,
    get backgroundTasks() {
      return tasks.size;
    },
    stop() {
      stopped ??= (async () => {
        await stopParts(running.parts);
        logger.info('stopped');
      })();
      return stopped;
    },
  };
}
