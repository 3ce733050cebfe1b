/**
 * Lets background work yield to Slack's requests. The HTTP server reports each request it is
 * answering; background work waits for {@link YieldGate.clear} before each step. While no request
 * is in flight, a step waits only for the I/O already pending (one `setImmediate`), so a request
 * that has just arrived is read first. While requests are in flight, waiting steps are let through
 * one at a time, one every `trickleMs`: background work goes on, slowly, under a flood that never
 * pauses, and an acknowledgement waits at most for that one step, never for a queue of them.
 */
export interface YieldGate {
  /** Resolves when a background step may run. Never rejects. */
  clear(): Promise<void>;
  /** Called by the HTTP server when a request arrives. */
  requestStarted(): void;
  /** Called by the HTTP server when that request was answered (or its client went away). */
  requestEnded(): void;
  /** Requests in flight now. */
  readonly inFlight: number;
}

/** Longest a waiting background step is held back while requests keep coming, in milliseconds. */
export const YIELD_TRICKLE_MS = 50;

export function createYieldGate(options: { trickleMs?: number } = {}): YieldGate {
  const trickleMs = options.trickleMs ?? YIELD_TRICKLE_MS;
  let inFlight = 0;
  const waiting: (() => void)[] = [];
  let trickle: NodeJS.Timeout | undefined;
  let releasing = false;

  /** After pending I/O callbacks: lets every waiting step go when the server is idle. */
  const releaseWhenIdle = () => {
    if (releasing) return;
    releasing = true;
    setImmediate(() => {
      releasing = false;
      if (inFlight > 0) return startTrickle();
      for (const resolve of waiting.splice(0)) resolve();
    });
  };

  const startTrickle = () => {
    if (trickle || waiting.length === 0) return;
    trickle = setInterval(() => {
      waiting.shift()?.();
      if (waiting.length === 0 || inFlight === 0) {
        clearInterval(trickle);
        trickle = undefined;
        if (waiting.length > 0) releaseWhenIdle();
      }
    }, trickleMs);
    // Background work alone never keeps the process up: a stopping app lets it go.
    trickle.unref();
  };

  return {
    clear() {
      return new Promise<void>((resolve) => {
        waiting.push(resolve);
        if (inFlight === 0) releaseWhenIdle();
        else startTrickle();
      });
    },
    requestStarted() {
      inFlight += 1;
    },
    requestEnded() {
      inFlight = Math.max(0, inFlight - 1);
      if (inFlight === 0 && waiting.length > 0) releaseWhenIdle();
    },
    get inFlight() {
      return inFlight;
    },
  };
}

/**
 * `target` with every method made to wait for `gate` first: a background client (Slack's, the
 * agent API's) whose every call is one slice of background work. Between two calls a job's work
 * is a few store writes; so under a flood of requests each slice is short, and slices are let
 * through one at a time.
 */
export function gated<T extends object>(target: T, gate: YieldGate): T {
  return new Proxy(target, {
    get(object, key, receiver) {
      const value = Reflect.get(object, key, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        await gate.clear();
        return value.apply(object, args);
      };
    },
  });
}
