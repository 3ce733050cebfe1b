import { buildFoundation, buildSlackSide, buildWork, type StartOptions } from './app-build.js';
import { runningParts, startParts, stopParts } from './app-parts.js';
import { buildReceiver } from './app-receiver.js';
import { createMembership } from './cluster/membership.js';
import type { Config } from './config/config.js';
import { recoverOrphans } from './jobs/recovery.js';
import type { Logger } from './logging/logger.js';
import type { Store } from './store/types.js';
import { createTaskTracker } from './util/tasks.js';
import { warmStart } from './warm-start.js';

export interface RunningApp {
  /** The HTTP port actually bound. */
  port: number;
  store: Store;
  logger: Logger;
  /** Background tasks running or queued right now: read-only, for observers waiting for quiet. */
  readonly backgroundTasks: number;
  /** Stops taking work, lets in-flight work finish (bounded), closes the store. */
  stop(): Promise<void>;
  /**
   * Resolves, with why, when the app stops by itself: Slack refused the app token after start
   * (Socket Mode), so it can never receive again. It is then already stopping (`stop` resolves
   * when it is done); the process should exit non-zero. Never resolves otherwise.
   */
  readonly failed: Promise<Error>;
}

/**
 * How the app stops by itself: said at error, told through `failed`, and stopped the way a
 * signal stops it (the store closed), once it has finished starting.
 */
function stopsOnRefusal(logger: Logger) {
  let refusal: Error | undefined;
  let stop: (() => Promise<void>) | undefined;
  let tell: (error: Error) => void = () => {};
  const failed = new Promise<Error>((resolve) => {
    tell = resolve;
  });
  const stopNow = () => void stop?.().catch((error) => logger.error('shutdown failed', { error }));
  return {
    failed,
    /** Slack refused the app token (`AppTokenRefusedError`) after start. */
    refused(error: Error) {
      if (refusal) return;
      refusal = error;
      logger.error('Slack refused SLACK_APP_TOKEN; stopping', { error });
      tell(error);
      stopNow();
    },
    /** The app has started: a refusal that came while it started stops it now. */
    started(stopApp: () => Promise<void>) {
      stop = stopApp;
      if (refusal) stopNow();
    },
  };
}

/**
 * Wires every part together and starts serving: the build sections (`app-build.ts`) in order,
 * then the running parts (`app-parts.ts`) started forward; `stop` runs them backward.
 */
export async function startApp(config: Config, options: StartOptions = {}): Promise<RunningApp> {
  const base = await buildFoundation(config, options);
  const { logger, store, instanceId, metrics } = base;
  const tasks = createTaskTracker(logger, { gate: base.gate, ...options.tasks });
  const membership = createMembership({
    store,
    instanceId,
    timeoutMs: config.instanceTimeoutMs,
    logger,
    onOrphans: recoverOrphans(tasks, () => work.jobs),
    // While every slot is taken, what waits stays in the store for a later round.
    canTakeOver: () => tasks.hasRoom,
    onClockOffset: (offsetMs) => metrics.hooks.clockOffset(offsetMs / 1000),
  });
  const side = buildSlackSide(base, membership);
  const { identity } = side;
  const work = buildWork(base, side, tasks, membership);
  const { outbox, poller, retention, checkpoints, following, health, jobs } = work;
  let ready = false;
  const selfStop = stopsOnRefusal(logger);
  const slackApp = buildReceiver(base, side, work, tasks, () => ready, selfStop.refused);

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
    loops: [outbox, poller, retention, checkpoints, following, side.sharedWaits],
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
  const stop = () => (stopped ??= stopParts(running.parts).then(() => logger.info('stopped')));
  selfStop.started(stop);
  return {
    port: running.port(),
    store,
    logger,
    get backgroundTasks() {
      return tasks.size;
    },
    stop,
    failed: selfStop.failed,
  };
}
