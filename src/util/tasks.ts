import type { Logger } from '../logging/logger.js';
import type { YieldGate } from './yield-gate.js';

/** Work started after Slack was acknowledged, tracked so shutdown can let it finish. */
export interface TaskTracker {
  /**
   * Runs `work` in the background, or queues it while `concurrency` tasks run; errors are logged
   * with `name`. Returns false, and takes nothing, when the queue is full or the tracker is
   * draining. Never waits: a listener can call it before Slack has its answer. A caller whose
   * work is recorded in the store hands it back there (`JobService.handBack`); other work is
   * either retried later by its owner or dropped, as the caller decides.
   */
  run(name: string, work: () => Promise<void>): boolean;
  /** Whether {@link TaskTracker.run} would take work now. */
  readonly hasRoom: boolean;
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
/**
 * Background tasks waiting for a slot, at most. A waiting task is a small closure (a name and an
 * id, a few hundred bytes), so a full queue holds about 1.5 MB: room for a burst of thousands of
 * commands, and no more however long the flood. Beyond it, recorded work stays in the store and
 * is carried on by the take-over round (see `JobService.handBack`): a burst delays work but
 * loses none.
 */
export const MAX_QUEUED_TASKS = 5_000;

export interface TaskTrackerOptions {
  /** Tasks running at once; default {@link TASK_CONCURRENCY}. */
  concurrency?: number;
  /** Tasks waiting at most; default {@link MAX_QUEUED_TASKS}. */
  maxQueued?: number;
  /**
   * What each task waits for before it starts: Slack's requests go first, and the task never
   * starts inside {@link TaskTracker.run}, whose caller is usually a listener that has not
   * answered Slack yet. Default: none, the task starts at once.
   */
  gate?: YieldGate;
}

export function createTaskTracker(logger: Logger, options: TaskTrackerOptions = {}): TaskTracker {
  const concurrency = options.concurrency ?? TASK_CONCURRENCY;
  const maxQueued = options.maxQueued ?? MAX_QUEUED_TASKS;
  const gate = options.gate;
  const running = new Set<Promise<void>>();
  const queued: { name: string; work: () => Promise<void> }[] = [];
  let draining = false;
  /** Work refused since the queue last had room: reported once per burst, not once per task. */
  let refused = 0;

  function start(name: string, work: () => Promise<void>) {
    const task = (async () => {
      try {
        // Taken is taken: a task that waits here when draining begins still runs (the server
        // stops first, so the gate lets it through at once).
        if (gate) await gate.clear();
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
      if (refused > 0 && queued.length < maxQueued) {
        logger.info('background work has room again', { refused });
        refused = 0;
      }
    });
  }

  const hasRoom = () => !draining && (running.size < concurrency || queued.length < maxQueued);

  return {
    run(name, work) {
      if (!hasRoom()) {
        if (!draining && refused++ === 0) {
          logger.warn('background work is full; further work waits in the store', {
            task: name,
            running: running.size,
            queued: queued.length,
          });
        }
        return false;
      }
      if (running.size < concurrency) start(name, work);
      else queued.push({ name, work });
      return true;
    },
    get hasRoom() {
      return hasRoom();
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
