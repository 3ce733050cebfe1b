import type { IncomingMessage } from 'node:http';
import type { App, ReceiverEvent } from '@slack/bolt';
import { isValidSlackRequest } from '@slack/bolt';
import { z } from 'zod';
import type { Logger } from '../logging/logger.js';

/**
 * What never reaches Bolt: a request refused before its body is read (no signature, a timestamp
 * out of skew, an unknown body type, a body over the limit), and a signed payload Bolt would fail
 * on or leave unanswered, answered here.
 */

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

/**
 * What Bolt 5.1 reads of an interactivity payload before any middleware runs (App.processEvent:
 * `getTypeAndConversation`, `buildSource`), and what routing it to a listener needs. Bolt reads
 * `user.id` of every one (a payload without `user` throws: HTTP 500), `channel.id` when a
 * `channel` is there, the first of `actions`, a view's `app_installed_team_id`; a payload of a
 * type it cannot tell (a `block_actions` without `actions`) reaches no listener and is never
 * answered (a 404 after 3 seconds). Each key is the payload's `type`.
 */
const person = z.looseObject({ id: z.string().min(1) });
const place = z.looseObject({ id: z.string().min(1) });
const action = z.looseObject({ action_id: z.string().min(1) });
const fromPerson = z.looseObject({ user: person, channel: place.optional() });
const clicks = fromPerson.extend({ actions: z.array(action).min(1) });
const shortcut = fromPerson.extend({ callback_id: z.string().min(1), trigger_id: z.string().min(1) });
const view = fromPerson.extend({ view: z.looseObject({ id: z.string().min(1), callback_id: z.string() }) });
const INTERACTIONS: Record<string, z.ZodType> = {
  block_actions: clicks,
  interactive_message: clicks,
  message_action: shortcut,
  shortcut,
  view_submission: view,
  view_closed: view,
  block_suggestion: fromPerson.extend({ action_id: z.string().min(1) }),
  dialog_submission: fromPerson,
  dialog_suggestion: fromPerson,
  dialog_cancellation: fromPerson,
};

/** A type named in a log line only when it reads as one: a value Slack did not mean as a name is never written. */
const typeName = (value: unknown): string =>
  typeof value === 'string' && /^[a-z_]{1,40}$/.test(value) ? value : '(unreadable)';

/** Why a body cannot be handed to Bolt: the fields it failed on, `path: code` each, never a value. */
function unreadable(body: Record<string, unknown>): { type: string; fields: string[] } | undefined {
  // Events and slash commands are read by their own listeners, which log what they cannot read;
  // Bolt only needs an event to be an object.
  if (body.event !== undefined) {
    const isObject = typeof body.event === 'object' && body.event !== null && !Array.isArray(body.event);
    return isObject ? undefined : { type: typeName(body.type), fields: ['event: invalid_type'] };
  }
  if (body.command !== undefined) return undefined;
  const schema = typeof body.type === 'string' ? INTERACTIONS[body.type] : undefined;
  if (!schema) return { type: typeName(body.type), fields: ['type: not_read'] };
  const parsed = schema.safeParse(body);
  if (parsed.success) return undefined;
  return {
    type: typeName(body.type),
    fields: parsed.error.issues.map((i) => `${i.path.join('.') || '(payload)'}: ${i.code}`),
  };
}

/**
 * Answers every signed request Bolt would fail on or leave unanswered, in both receivers (each
 * hands its requests to `App.processEvent`). A payload Bolt cannot read is answered 200 without
 * reaching Bolt, and logged once, naming the fields it failed on (never their values, which may
 * be what a person wrote); one no listener answered is answered 200 after the listeners ran.
 * A listener's own failure is still passed on (HTTP 500), as the app's error handler decides.
 */
export function screenRequests(app: Pick<App, 'processEvent'>, logger: Logger): void {
  const process = app.processEvent.bind(app);
  app.processEvent = async (event: ReceiverEvent) => {
    const body = event.body as Record<string, unknown>;
    const problem = unreadable(body);
    if (problem) {
      logger.warn('a request from Slack could not be read; answered and dropped', problem);
      await event.ack();
      return;
    }
    let answered = false;
    const ack: ReceiverEvent['ack'] = (response) => {
      answered = true;
      return event.ack(response);
    };
    await process({ ...event, ack });
    if (answered) return;
    logger.warn('no listener answered a request from Slack; answered empty', { type: typeName(body.type) });
    await event.ack();
  };
}

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
