import type { Foundation, SlackSide, Work } from './app-build.js';
import { createSlackApp } from './http/bolt-app.js';
import { countNotRecorded } from './http/not-recorded.js';
import { outboxWrites } from './jobs/job-context.js';
import type { MetricsHooks } from './jobs/metrics-hooks.js';
import { registerListeners } from './listeners/index.js';
import type { ListenerDeps } from './listeners/types.js';
import type { TaskTracker } from './util/tasks.js';

/** What the listeners are built from: the parts as the build sections made them. */
export interface ListenerParts extends Omit<ListenerDeps, 'jobs' | 'outbox' | 'metrics' | 'socketMode'> {
  config: ListenerDeps['config'] & Pick<Foundation['config'], 'slack'>;
  store: ListenerDeps['store'] & Parameters<typeof outboxWrites>[0];
  jobs: ListenerDeps['jobs'];
  outbox: Parameters<typeof outboxWrites>[1];
  metrics: Pick<MetricsHooks, 'feedback' | 'instruction'>;
}

/**
 * What every listener is given, from the parts: the job service counting what it could not
 * record (listeners are where instructions arrive), the outbox's writes, and whether Slack
 * delivers over Socket Mode (which acknowledges events before listeners run).
 */
export function listenerDeps(parts: ListenerParts): ListenerDeps {
  return {
    ...parts,
    jobs: countNotRecorded(parts.jobs, parts.metrics),
    outbox: outboxWrites(parts.store, parts.outbox),
    socketMode: parts.config.slack.appToken !== undefined,
  };
}

/** The receiver of Slack's requests, with a listener for each surface (and who hears a refused app token). */
export function buildReceiver(
  base: Foundation,
  { identity, slack, names }: SlackSide,
  work: Work,
  tasks: TaskTracker,
  isReady: () => boolean,
  onAppTokenRefused?: (error: Error) => void,
) {
  const { config, logger, redact, store, metrics, gate, hints } = base;
  const { access, jobs, home, health, steps, outbox } = work;
  const slackApp = createSlackApp({
    config,
    logger,
    identity,
    isReady,
    routes: metrics.routes,
    gate,
    onAppTokenRefused,
  });
  registerListeners(
    slackApp.app,
    listenerDeps({
      config,
      logger,
      redact,
      store,
      hints,
      metrics: metrics.hooks,
      identity,
      slack,
      names,
      tasks,
      access,
      jobs,
      home,
      health,
      outbox,
      steps: steps.completer,
    }),
  );
  return slackApp;
}
