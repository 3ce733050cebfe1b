/** The q-quantile (0..1) of `values`, nearest rank; NaN when empty. */
export function quantile(values: number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] as number;
}

/** The median of `values` (nearest rank); NaN when empty. */
export const median = (values: number[]) => quantile(values, 0.5);

export interface Summary {
  count: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export function summarize(values: number[]): Summary {
  return {
    count: values.length,
    p50: quantile(values, 0.5),
    p95: quantile(values, 0.95),
    p99: quantile(values, 0.99),
    max: values.length ? Math.max(...values) : Number.NaN,
  };
}

/** The most events in any window [t, t + widthMs) of the given times (milliseconds). */
export function busiestWindow(times: number[], widthMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while ((sorted[end] as number) - (sorted[start] as number) >= widthMs) start += 1;
    best = Math.max(best, end - start + 1);
  }
  return best;
}

export const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

/** Wall-clock time in milliseconds with sub-millisecond precision, comparable across processes. */
export const preciseNow = () => performance.timeOrigin + performance.now();
