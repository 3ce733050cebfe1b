import type { Membership } from './cluster/membership.js';
import type { Health } from './http/health.js';
import type { Logger } from './logging/logger.js';
import { type Loop, withTimeout } from './util/loop.js';
import type { TaskTracker } from './util/tasks.js';
import type { WarmStart } from './warm-start.js';

/**
 * A named part of the running app: what starting it and stopping it take. Either may be absent
 * (a part opened when built, or one whose stop another part's covers).
 */
export interface Part {
  name: string;
  start?: () => Promise<void> | void;
  stop?: () => Promise<void> | void;
}

/**
 * Starts the parts in order, each once the one before it has started. When one fails to start,
 * the parts before it are stopped (backward, as {@link stopParts} does: the store is closed
 * too) before the failure is passed on; the failing part undoes its own half-start.
 */
export async function startParts(parts: readonly Part[]): Promise<void> {
  for (const [index, part] of parts.entries()) {
    try {
      await part.start?.();
    } catch (error) {
      await stopParts(parts.slice(0, index));
      throw error;
    }
  }
}

/** Stops the parts in the reverse of their start order: what started last stops first. */
export async function stopParts(parts: readonly Part[]): Promise<void> {
  for (const part of [...parts].reverse()) await part.stop?.();
}

/** How long shutdown lets in-flight work finish before closing anyway, in milliseconds. */
export const SHUTDOWN_GRACE_MS = 7_000;

/** What the running app is made of, built by `startApp`. */
export interface Running {
  logger: Logger;
  store: { close(): Promise<void> };
  membership: Pick<Membership, 'join' | 'start' | 'leave'>;
  /** The receiver of Slack's requests; `start` resolves with the port it bound. */
  receiver: { start(): Promise<number>; stop(): Promise<void> };
  /** Readies the ack path on the bound port, before `/healthz` says ready. */
  warm: (port: number) => Promise<WarmStart>;
  /** The background loops, in the order they start: outbox, poller, retention sweep, checkpoints, pull requests followed, the shared Slack waits. */
  loops: readonly Loop[];
  health: Pick<Health, 'setPollerRunning'>;
  jobs: { stop(): void };
  tasks: Pick<TaskTracker, 'drain'>;
  /** Called when the app is ready to serve (with the port and what warming did), and when it stops. */
  ready: (port: number, warmUp: WarmStart | undefined) => void;
  unready: () => void;
}

/**
 * The running app as an ordered list of parts: started forward, stopped backward. The loops
 * start once the receiver is warm (`background`) but stop only after the work in flight has
 * drained (`loops`), so their stop sits below the receiver's. `port` is known once started.
 */
export function runningParts(app: Running): { parts: Part[]; port: () => number } {
  const { logger, membership, loops, health, tasks } = app;
  let port = 0;
  let warmUp: WarmStart | undefined;
  const stopping = { deadline: 0, drained: true };
  const parts: Part[] = [
    { name: 'store', stop: () => app.store.close() },
    {
      name: 'membership',
      // Registered before the first request: rows this instance owns must never look orphaned.
      start: () => membership.join(),
      // Other instances take over whatever is left at once instead of waiting for a time-out.
      stop: () =>
        membership
          .leave({ callsUnderWay: !stopping.drained })
          .catch((error) => logger.warn('could not sign off from the store', { error })),
    },
    {
      name: 'loops',
      async stop() {
        health.setPollerRunning(false);
        await withTimeout(
          Promise.all(loops.map((loop) => loop.stop())),
          Math.max(500, stopping.deadline - Date.now()),
        );
        logger.info('poller, outbox, retention sweep and checkpoints stopped');
      },
    },
    {
      name: 'work in flight',
      async stop() {
        app.jobs.stop();
        stopping.drained = await tasks.drain(Math.max(0, stopping.deadline - Date.now()));
        if (!stopping.drained) logger.warn('shutdown grace ran out with work in flight');
        // Polls and deliveries in flight are safe to abandon: nothing is marked done until Slack
        // or the agent API answered, so the next start picks them up again.
        logger.info('tasks drained', { drained: stopping.drained });
      },
    },
    {
      name: 'receiver',
      async start() {
        port = await app.receiver.start();
        // Ready means fast: the ack path is compiled and the connection to Slack open.
        warmUp = await app.warm(port);
      },
      async stop() {
        await app.receiver
          .stop()
          .catch((error) => logger.warn('stopping the Slack receiver failed', { error }));
        logger.info('receiver stopped');
      },
    },
    {
      name: 'background',
      start() {
        for (const loop of loops) loop.start();
        health.setPollerRunning(true);
        membership.start();
      },
    },
    {
      name: 'ready',
      start: () => app.ready(port, warmUp),
      stop() {
        app.unready();
        logger.info('shutting down');
        stopping.deadline = Date.now() + SHUTDOWN_GRACE_MS;
      },
    },
  ];
  return { parts, port: () => port };
}
