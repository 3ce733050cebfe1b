/**
 * Lets background work yield to Slack's requests. The receiver reports each request it is
 * answering once its signature checked out (a stranger's request, however slow, holds nothing
 * back); background work waits for {@link YieldGate.clear} before each step.
 *
 * "No request in flight" is not enough to call the server idle: Node reads one request, answers
 * it (the ack path has no I/O of its own to wait for) and only then reads the next one waiting on
 * another connection, so under a burst the count drops to zero between every two requests. The
 * gate therefore lets waiting steps go only once the server has been quiet for `quietMs` (no
 * request started or ended), and then after the I/O already pending (one `setImmediate`), so a
 * request that has just arrived is read first. A burst shorter than `holdMs` runs without any
 * background work in between; when requests keep coming for longer, waiting steps are let
 * through one at a time, one every `trickleMs`: background work goes on, slowly, under a flood
 * that never pauses, and an acknowledgement waits at most for that one step, never for a queue.
 */
export interface YieldGate {
  /** Resolves when a background step may run. Never rejects. */
  clear(): Promise<void>;
  /** Called by the receiver when a request signed by Slack is being answered. */
  requestStarted(): void;
  /** Called by the HTTP server when that request was answered (or its client went away). */
  requestEnded(): void;
  /** Requests in flight now. */
  readonly inFlight: number;
}

/** Longest a waiting background step is held back while requests keep coming, in milliseconds. */
export const YIELD_TRICKLE_MS = 50;

/**
 * How long the server must have seen no request start or end before background work runs
 * freely, in milliseconds. Between two requests of a burst Node spends well under a millisecond;
 * a person's single command waits this long more for its card, which nobody can see.
 */
export const YIELD_QUIET_MS = 8;

/**
 * How long a burst of requests holds background work back entirely, in milliseconds: the burst
 * a deploy's first minute brings is answered without a single background step in between (the
 * first of them, compiled on first use, would cost tens of milliseconds).
 */
export const YIELD_HOLD_MS = 1_000;

export function createYieldGate(
  options: { trickleMs?: number; quietMs?: number; holdMs?: number } = {},
): YieldGate {
  const trickleMs = options.trickleMs ?? YIELD_TRICKLE_MS;
  const quietMs = options.quietMs ?? YIELD_QUIET_MS;
  const holdMs = options.holdMs ?? YIELD_HOLD_MS;
  let inFlight = 0;
  /** When a request last started or ended (`performance.now()`); -Infinity: never. */
  let lastActivity = Number.NEGATIVE_INFINITY;
  /** When the server last went from quiet to busy (`performance.now()`). */
  let busySince = 0;
  const waiting: (() => void)[] = [];
  let trickle: NodeJS.Timeout | undefined;
  let quietCheck: NodeJS.Timeout | undefined;
  let releasing = false;

  const quietFor = () => (inFlight > 0 ? 0 : performance.now() - lastActivity);

  /** Lets every waiting step go once the server is quiet; until then, trickles. */
  const releaseWhenQuiet = () => {
    if (waiting.length === 0 || releasing || quietCheck) return;
    const remaining = quietMs - quietFor();
    if (remaining > 0 || inFlight > 0) {
      startTrickle();
      // A request in flight re-arms the check when it ends.
      if (inFlight > 0) return;
      quietCheck = setTimeout(() => {
        quietCheck = undefined;
        releaseWhenQuiet();
      }, Math.ceil(remaining));
      quietCheck.unref();
      return;
    }
    releasing = true;
    // After pending I/O callbacks: a request that has just arrived is read first.
    setImmediate(() => {
      releasing = false;
      if (quietFor() < quietMs) return releaseWhenQuiet();
      stopTrickle();
      for (const resolve of waiting.splice(0)) resolve();
    });
  };

  const stopTrickle = () => {
    clearInterval(trickle);
    trickle = undefined;
  };

  const startTrickle = () => {
    if (trickle || waiting.length === 0) return;
    trickle = setInterval(() => {
      if (performance.now() - busySince < holdMs) return;
      waiting.shift()?.();
      if (waiting.length === 0) stopTrickle();
    }, trickleMs);
    // Background work alone never keeps the process up: a stopping app lets it go.
    trickle.unref();
  };

  return {
    clear() {
      return new Promise<void>((resolve) => {
        waiting.push(resolve);
        releaseWhenQuiet();
      });
    },
    requestStarted() {
      const now = performance.now();
      if (inFlight === 0 && now - lastActivity >= quietMs) busySince = now;
      inFlight += 1;
      lastActivity = now;
    },
    requestEnded() {
      inFlight = Math.max(0, inFlight - 1);
      lastActivity = performance.now();
      if (inFlight === 0) releaseWhenQuiet();
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
