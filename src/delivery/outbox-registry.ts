import { z } from 'zod';
import { cardKey, outboxKeys, unkeyedPostKey } from '../domain/keys.js';
import type { OutboxPayload, PostKind } from '../domain/outbox-payload.js';

/*
 * Every kind of outbox item the bot queues: what it asks Slack to do (its payload), the key
 * that makes it once-only, and the metadata its Slack message carries. The keys are the
 * database's uniqueness keys *and* the metadata a restarted bot reads back from Slack to tell
 * whether a message is already there: items written by an earlier release must still be
 * recognised after an upgrade, so a key's text never changes (a test pins each one).
 */

/** Metadata event type of the bot's thread posts. */
export const POST_EVENT_TYPE = 'docs_agent_post';
/**
 * Metadata event type of a job's status card. Its text (and the card's key, `root:…`) predates
 * the name "status card": stored cards carry it, so it stays.
 */
export const CARD_EVENT_TYPE = 'docs_agent_root';

/** Metadata event type of an outcome told outside the job's thread (a channel notification, a DM). */
export const NOTIFICATION_EVENT_TYPE = 'docs_agent_notification';

/** The metadata event types of everything the bot posts: its own messages carry one of them. */
export const BOT_EVENT_TYPES: ReadonlySet<string> = new Set([
  POST_EVENT_TYPE,
  CARD_EVENT_TYPE,
  NOTIFICATION_EVENT_TYPE,
]);

/** A thread post about a run: its Slack message carries {@link POST_EVENT_TYPE} metadata. */
const post = <A>(about: PostKind, key: (args: A) => string) =>
  ({ payload: 'post', about, eventType: POST_EVENT_TYPE, key }) as const;
/** A private note to one person (a response_url reply, or an ephemeral message): no metadata. */
const note = <A>(key: (args: A) => string) => ({ payload: 'private', key }) as const;

/**
 * A run's outcome told outside its thread: its message carries {@link NOTIFICATION_EVENT_TYPE}
 * metadata, found again in the channel's (or the DM's) recent history after a crash.
 */
const notification = <P extends 'notify' | 'direct'>(
  payload: P,
  key: (args: { jobId: number; runSeq: number }) => string,
) => ({ payload, eventType: NOTIFICATION_EVENT_TYPE, key }) as const;

const k = outboxKeys;

/** The kinds of outbox items, by name; their keys live beside the trigger keys (`domain/keys.ts`). */
export const OUTBOX_ITEMS = {
  /** The outcome of a run (and of the follow-ups merged into it), by the run's sequence number. */
  outcome: post('outcome', k.outcome),
  /** The create call failed: the job did not (surely) start. */
  startError: post('notice', k.startError),
  /** A restart came between the create call and its answer. */
  startUnknown: post('notice', k.startUnknown),
  /** Polling is refused (the admin key), once per run count. */
  pollRefused: post('notice', k.pollRefused),
  /** A batch of follow-ups failed to send, by the batch's first run. */
  followUpError: post('notice', k.followUpError),
  /** A restart came while a follow-up was being sent. */
  followUpUnknown: post('notice', k.followUpUnknown),
  /** A run's outcome announced in the notification channel (`NOTIFY_CHANNEL_ID`). */
  notification: notification('notify', k.notification),
  /** A run's outcome sent to the requester by direct message (`NOTIFY_REQUESTER=dm`). */
  requesterDm: notification('direct', k.requesterDm),
  /** Someone pressed stop on the job's session: what was withdrawn, and what goes on. */
  stopped: post('notice', k.stopped),
  /** A stop pressed by someone who may not stop the job, told once per press. */
  stopRefused: note(k.stopRefused),
  /** The root message could not be posted: the job was not started. */
  startRefused: note(k.startRefused),
  /** The first instruction was refused (length, access, hourly limits). */
  refused: note(k.refused),
  /** A restart came while the root message was being posted: nothing was started. */
  restartRefused: note(k.restartRefused),
  /** A follow-up refused or not sent, told to its author. */
  dropped: note(k.dropped),
  /** An instruction held until Slack confirms its author, told once per instruction. */
  held: note(k.held),
  /** An edit (one version of a message) or deletion that came after the agent had the text. */
  editedLate: note(k.editedLate),
  deletedLate: note(k.deletedLate),
  /** An edit of a waiting instruction that was not taken (too long), once per message version. */
  editRefused: note(k.editRefused),
  /** A waiting reply edited into an aside (or nothing): taken out of its batch. */
  withdrawn: note(k.withdrawn),
  /** Files shared with an instruction do not reach the agent: told once per message. */
  filesUnseen: note(k.filesUnseen),
  /** The emoji on a follow-up the agent accepted. */
  received: { payload: 'reaction', key: k.received },
  /** A Workflow Builder step's answer, once per step execution (Slack's `function_execution_id`). */
  stepCompleted: { payload: 'complete_step', key: k.stepCompleted },
  /** A "Wait for a docs agent job" step, answered once its job's run ends. */
  stepWait: { payload: 'await_job', key: k.stepWait },
  /** A re-render of the status card: never deduplicated, newer ones supersede older ones. */
  cardUpdate: { payload: 'update_root', key: null },
} as const;

type Items = typeof OUTBOX_ITEMS;
type KeyedItem = { [K in keyof Items]: Items[K]['key'] extends null ? never : K }[keyof Items];

/** The dedupe key of each kind of outbox item, from typed arguments. */
export const keys = Object.fromEntries(
  Object.entries(OUTBOX_ITEMS).flatMap(([name, item]) => (item.key ? [[name, item.key]] : [])),
) as { [K in KeyedItem]: NonNullable<Items[K]['key']> };

/** The Slack metadata of a job's status card, so a restarted bot finds one it did not record. */
export const cardMetadata = (jobId: number) => ({ eventType: CARD_EVENT_TYPE, key: cardKey(jobId) });

/** The metadata key of a thread post queued without a dedupe key: its outbox id. */
export { unkeyedPostKey };

const about = z.looseObject({
  kind: z.enum(['outcome', 'notice']),
  run: z.number().nullable(),
  source: z.string().nullable(),
  covers: z.string().optional(),
  sources: z.string().optional(),
});

const notificationFields = z.record(z.string(), z.union([z.string(), z.number(), z.null()]));

/**
 * What an outbox item asks Slack to do, checked when it is read back from the store (it may
 * have been written by another release). Fields this release does not know are kept.
 */
export const outboxPayloadSchema = z.discriminatedUnion('type', [
  z.looseObject({
    type: z.literal('post'),
    channel: z.string(),
    threadTs: z.string(),
    text: z.string(),
    eventType: z.string(),
    about: about.optional(),
    blocks: z.array(z.unknown()).optional(),
  }),
  z.looseObject({ type: z.literal('update_root'), channel: z.string(), ts: z.string() }),
  z.looseObject({ type: z.literal('reaction'), channel: z.string(), ts: z.string(), name: z.string() }),
  z.looseObject({
    type: z.literal('respond'),
    responseUrl: z.string(),
    text: z.string(),
    fallback: z.looseObject({ channel: z.string(), user: z.string() }).optional(),
  }),
  z.looseObject({
    type: z.literal('notify'),
    channel: z.string(),
    text: z.string(),
    eventType: z.string(),
    fields: notificationFields.optional(),
    blocks: z.array(z.unknown()).optional(),
  }),
  z.looseObject({
    type: z.literal('direct'),
    user: z.string(),
    text: z.string(),
    eventType: z.string(),
    fields: notificationFields.optional(),
    blocks: z.array(z.unknown()).optional(),
  }),
  z.looseObject({
    type: z.literal('ephemeral'),
    channel: z.string(),
    user: z.string(),
    threadTs: z.string().nullable(),
    text: z.string(),
  }),
  z.looseObject({
    type: z.literal('complete_step'),
    executionId: z.string(),
    result: z.union([
      z.object({ job: z.number(), channel: z.string(), threadTs: z.string() }),
      z.object({ error: z.string() }),
    ]),
  }),
  z.looseObject({
    type: z.literal('await_job'),
    executionId: z.string(),
    job: z.number(),
    deadline: z.number(),
  }),
]);

/** Checks a payload read back from the store; an error names what is wrong. */
export function parseOutboxPayload(
  payload: unknown,
): { ok: true; payload: OutboxPayload } | { ok: false; error: string } {
  const result = outboxPayloadSchema.safeParse(payload);
  if (!result.success) return { ok: false, error: z.prettifyError(result.error) };
  // Typed: what the schema lets through is a payload the code knows how to deliver.
  const checked: OutboxPayload = result.data;
  return { ok: true, payload: checked };
}
