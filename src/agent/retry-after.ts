/** Longest wait a rate-limit answer may ask for: the agent API's limits are hourly. */
export const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/** How long a rate-limit answer asks to wait, in milliseconds, at most {@link MAX_RETRY_AFTER_MS}. */
export function parseRetryAfter(headers: Headers, nowMs: number): number | undefined {
  const ms = retryAfterOf(headers, nowMs);
  return ms === undefined || Number.isNaN(ms) ? undefined : Math.min(ms, MAX_RETRY_AFTER_MS);
}

/** Parses `Retry-After` (seconds or HTTP date) or a reset header into milliseconds from now. */
function retryAfterOf(headers: Headers, nowMs: number): number | undefined {
  const retryAfter = headers.get('retry-after');
  if (retryAfter) {
    const trimmed = retryAfter.trim();
    if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
    // Only an HTTP date is valid otherwise; a negative number is not a date.
    const date = /^-?[\d.]+$/.test(trimmed) ? Number.NaN : Date.parse(trimmed);
    if (!Number.isNaN(date)) return Math.max(0, date - nowMs);
  }
  const reset = headers.get('x-ratelimit-reset') ?? headers.get('ratelimit-reset');
  if (reset) {
    const value = Number(reset);
    if (Number.isFinite(value) && value >= 0) {
      // Large values are epoch seconds, small ones a delta in seconds.
      return value > 1e9 ? Math.max(0, value * 1000 - nowMs) : Math.round(value * 1000);
    }
  }
  return undefined;
}
