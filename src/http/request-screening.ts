import type { IncomingMessage } from 'node:http';

/** Largest request body accepted on /slack/events. Slack's own payloads stay far below. */
export const MAX_BODY_BYTES = 256 * 1024;
/**
 * Largest unsigned body passed on to Bolt. Slack's `ssl_check` requests are the only unsigned
 * ones it sends (`ssl_check=1&token=…`); Bolt answers them and refuses any other unsigned body.
 */
export const MAX_UNSIGNED_BODY_BYTES = 1024;

/** Slack refuses to sign for more than five minutes either way; so do we. */
export const MAX_CLOCK_SKEW_S = 5 * 60;
const BODY_TYPES = ['application/x-www-form-urlencoded', 'application/json'];

/**
 * Refuses what Bolt's own checks let through: far-future timestamps, unknown body types, huge
 * bodies, and unsigned bodies too large to be Slack's `ssl_check`.
 */
export function screenRequest(
  req: IncomingMessage,
  nowMs = Date.now(),
): { status: number; reason: string } | undefined {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const length = Number(req.headers['content-length'] ?? Number.NaN);
  const timestamp = Number(req.headers['x-slack-request-timestamp']);
  if (!req.headers['x-slack-signature'] || !Number.isFinite(timestamp)) {
    const sslCheck = type === 'application/x-www-form-urlencoded' && length <= MAX_UNSIGNED_BODY_BYTES;
    return sslCheck ? undefined : { status: 401, reason: 'missing request signature' };
  }
  if (Math.abs(nowMs / 1000 - timestamp) > MAX_CLOCK_SKEW_S) {
    return { status: 401, reason: 'stale or future request timestamp' };
  }
  if (!BODY_TYPES.includes(type)) return { status: 415, reason: 'unsupported content type' };
  if (length > MAX_BODY_BYTES) return { status: 413, reason: 'body too large' };
  return undefined;
}
