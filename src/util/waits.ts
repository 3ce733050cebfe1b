/** How long to wait: for an answer, at most, and before trying again after a failure. */

/** `work`'s answer, or undefined once `ms` milliseconds have passed (the work is not cancelled). */
export async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Exponential backoff: `firstMs` after the first failure, doubling with each further one, never
 * more than `maxMs`. The exponent is capped so a long-failing item cannot overflow to Infinity.
 */
export function backoffMs(firstMs: number, failures: number, maxMs: number): number {
  return Math.min(maxMs, firstMs * 2 ** Math.min(Math.max(failures - 1, 0), 30));
}
