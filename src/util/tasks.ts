import type { Logger } from '../logger.js';

/** Work started after Slack was acknowledged, tracked so shutdown can let it finish. */
export interface TaskTracker {
  /** Runs `work` in the background; errors are logged with `name`. */
  run(name: string, work: () => Promise<void>): void;
  /** Waits for running work, at most `timeoutMs`; true when everything finished. */
  drain(timeoutMs: number): Promise<boolean>;
  readonly size: number;
}

export function createTaskTracker(logger: Logger): TaskTracker {
  const running = new Set<Promise<void>>();
  return {
    run(name, work) {
      const task = (async () => {
        try {
          await work();
        } catch (error) {
          logger.error(`${name} failed`, { error });
        }
      })();
      running.add(task);
      void task.finally(() => running.delete(task));
    },
    async drain(timeoutMs) {
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
      return running.size;
    },
  };
}
