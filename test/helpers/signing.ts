import { createHmac } from 'node:crypto';

export const SIGNING_SECRET = 'test-signing-secret-0000';

/** Slack's request signature: `v0=` + hex HMAC-SHA256 of `v0:{timestamp}:{body}`. */
export function signature(secret: string, timestamp: number | string, body: string): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
}

export interface SendOptions {
  secret?: string;
  /** Seconds since the epoch; defaults to now. */
  timestamp?: number;
  headers?: Record<string, string>;
  contentType?: string;
}

/** POSTs a correctly signed body to the app's /slack/events. */
export async function postSigned(
  baseUrl: string,
  body: string,
  options: SendOptions = {},
): Promise<Response> {
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  return fetch(`${baseUrl}/slack/events`, {
    method: 'POST',
    headers: {
      'content-type': options.contentType ?? 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': String(timestamp),
      'x-slack-signature': signature(options.secret ?? SIGNING_SECRET, timestamp, body),
      ...options.headers,
    },
    body,
  });
}
