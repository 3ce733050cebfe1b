import type { Logger } from '../logger.js';

/** Work started after Slack was acknowledged, tracked so shutdown can let it finish. */
export interface TaskTracker {
  /**
   * Runs `work` in the background, or queues it while `concurrency` tasks run; errors are logged
   * with `name`.
   */
  run(name: string, work: () => Promise<void>): void;
  /**
   * Stops starting queued work and waits for running work, at most `timeoutMs`; true when
   * everything running finished. Queued work is left to the store: it is recorded there, and
   * whichever instance takes it over (this one after a restart, or another) carries it on.
   */
  drain(timeoutMs: number): Promise<boolean>;
  /** Tasks running or queued. */
  readonly size: number;
}

/** Background tasks running at once by default: acknowledgements stay fast under a burst. */
export const TASK_CONCURRENCY = 16;

export function createTaskTracker(logger: Logger, concurrency = TASK_CONCURRENCY): TaskTracker {
  const running = new Set<Promise<void>>();
  const queued: { name: string; work: () => Promise<void> }[] = [];
  let draining = false;

  function start(name: string, work: () => Promise<void>) {
    const task = (async () => {
      try {
        await work();
      } catch (error) {
        logger.error(`${name} failed`, { error });
      }
    })();
    running.add(task);
    void task.finally(() => {
      running.delete(task);
      const next = draining ? undefined : queued.shift();
      if (next) start(next.name, next.work);
    });
  }

  return {
    run(name, work) {
      if (draining) return;
      if (running.size < concurrency) start(name, work);
      else queued.push({ name, work });
    },
    async drain(timeoutMs) {
      draining = true;
      if (queued.length > 0) {
        logger.info('leaving queued work to be carried on after the stop', { tasks: queued.length });
        queued.length = 0;
      }
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      });
      const done = Promise.allSettled([...running]).then(() => true as const);
      const finished = await Promise.race([done, timeout]);
      clearTimeout(timer);
      return finished;
    },
    get size() {
      return running.size + queued.length;
    },
  };
}
