import type { IncomingMessage } from 'node:http';
import { isValidSlackRequest } from '@slack/bolt';

/**
 * Longest a request to /slack/events may take to send its body once its headers are in, in
 * milliseconds. Slack sends its small bodies at once, and gives up on a request it has not had
 * answered within 3 seconds anyway (it delivers the event again): a body still arriving after
 * that is a stranger's, and is answered 408 and its connection closed, instead of holding a
 * connection until the server's general `REQUEST_TIMEOUT_MS`.
 */
export const SLACK_BODY_TIMEOUT_MS = 3_000;

/** How reading a body ended. */
export type BodyRead =
  | { kind: 'body'; body: Buffer }
  | { kind: 'timeout' }
  | { kind: 'too_large' }
  /** The client went away first. */
  | { kind: 'aborted' };

/**
 * Reads a request's whole body, at most `limitBytes`, within `timeoutMs` of being called.
 * Never rejects. Whatever the outcome, the request is no longer listened to afterwards.
 */
export function readBody(
  req: IncomingMessage,
  { limitBytes, timeoutMs }: { limitBytes: number; timeoutMs: number },
): Promise<BodyRead> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) finish({ kind: 'too_large' });
      else chunks.push(chunk);
    };
    const onEnd = () => finish({ kind: 'body', body: Buffer.concat(chunks) });
    const onGone = () => finish({ kind: 'aborted' });
    const timer = setTimeout(() => finish({ kind: 'timeout' }), timeoutMs);
    function finish(result: BodyRead) {
      clearTimeout(timer);
      req.off('data', onData).off('end', onEnd).off('error', onGone).off('close', onGone);
      resolve(result);
    }
    req.on('data', onData).on('end', onEnd).on('error', onGone).on('close', onGone);
  });
}

/**
 * Whether Slack signed this body (Bolt's own check: the HMAC of `v0:{timestamp}:{body}`, and a
 * timestamp at most five minutes old). Bolt checks again; this answer only decides whether the
 * request may count as Slack's before Bolt has run.
 */
export function signedBySlack(req: IncomingMessage, body: Buffer, signingSecret: string): boolean {
  const signature = req.headers['x-slack-signature'];
  const timestamp = Number(req.headers['x-slack-request-timestamp']);
  if (typeof signature !== 'string' || !Number.isFinite(timestamp)) return false;
  return isValidSlackRequest({
    signingSecret,
    body: body.toString('utf8'),
    headers: { 'x-slack-signature': signature, 'x-slack-request-timestamp': timestamp },
  });
}
