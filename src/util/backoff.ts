/**
 * Exponential backoff: `firstMs` after the first failure, doubling with each further one, never
 * more than `maxMs`. The exponent is capped so a long-failing item cannot overflow to Infinity.
 */
export function backoffMs(firstMs: number, failures: number, maxMs: number): number {
  return Math.min(maxMs, firstMs * 2 ** Math.min(Math.max(failures - 1, 0), 30));
}
