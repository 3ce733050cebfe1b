import { z } from 'zod';
import type { OutboxItem } from '../store/types.js';
import { cardUpdates } from './kinds/card-update.js';
import { notifications } from './kinds/notification.js';
import { privateNotes } from './kinds/private-note.js';
import { reactions } from './kinds/reaction.js';
import { threadPosts } from './kinds/thread-post.js';
import { workflowSteps } from './kinds/workflow-step.js';
import {
  type ClaimCovers,
  ClaimLost,
  type Delivery,
  type KindSender,
  type RescueResult,
  type SendDeps,
} from './outbox-kind.js';

/*
 * Every kind of outbox item the bot queues, one line each: a new kind is a file in `kinds/` (its
 * payloads' schemas, its named items and keys, its builders and how it is sent) and its line
 * here. What the outbox needs of all of them together is worked out from this list.
 */
const KINDS = [
  threadPosts, // posts in a job's thread about its runs
  cardUpdates, // the status card re-rendered, with its session, emoji and App Home
  reactions, // emoji on a message
  privateNotes, // what one person is told privately
  notifications, // a run's outcome told outside its thread
  workflowSteps, // Workflow Builder steps answered
] as const;

type Kind = (typeof KINDS)[number];

/** What an outbox item asks Slack to do: a payload of one of the kinds, as its schema says. */
export type OutboxPayload = z.infer<Kind['payloads'][number]>;

/** Each kind's named items, together: name → dedupe key (null: never deduplicated). */
type ItemsOf<K extends readonly Kind[]> = K extends readonly [
  infer First extends Kind,
  ...infer Rest extends readonly Kind[],
]
  ? First['items'] & ItemsOf<Rest>
  : unknown;
type Items = ItemsOf<typeof KINDS>;

/** Every named item of every kind, by name, with its dedupe key (null: never deduplicated). */
export const OUTBOX_ITEMS = Object.fromEntries(
  KINDS.flatMap((kind) => Object.entries(kind.items)),
) as unknown as Items;

type KeyedItem = { [K in keyof Items]: Items[K] extends null ? never : K }[keyof Items];

/** The dedupe key of each named item, from typed arguments. */
export const keys = Object.fromEntries(Object.entries(OUTBOX_ITEMS).filter(([, key]) => key !== null)) as {
  [K in KeyedItem]: NonNullable<Items[K]>;
};

/** The metadata event types of everything the bot posts: its own messages carry one of them. */
export const BOT_EVENT_TYPES: ReadonlySet<string> = new Set(
  KINDS.flatMap((kind) => (kind.eventType ? [kind.eventType] : [])),
);

type Schema = Kind['payloads'][number];

/**
 * What an outbox item asks Slack to do, checked when it is read back from the store (it may
 * have been written by another release). Fields this release does not know are kept.
 */
const outboxPayloadSchema = z.discriminatedUnion(
  'type',
  // Not empty: the list above.
  KINDS.flatMap((kind): Schema[] => [...kind.payloads]) as [Schema, ...Schema[]],
);

/** Checks a payload read back from the store; an error names what is wrong. */
export function parseOutboxPayload(
  payload: unknown,
): { ok: true; payload: OutboxPayload } | { ok: false; error: string } {
  const result = outboxPayloadSchema.safeParse(payload);
  if (!result.success) return { ok: false, error: z.prettifyError(result.error) };
  return { ok: true, payload: result.data };
}

/** How every kind is sent: an item goes to its own kind's sender, found by its payload's type. */
export interface Sender {
  /**
   * Delivers an item; resolves to Slack's error code when it is given up without an error, or
   * when to take it again. Nothing is sent once the claim on it no longer covers a call.
   */
  send(item: OutboxItem<OutboxPayload>, claimCovers: ClaimCovers): Promise<Delivery>;
  /** Another way to say an item Slack refused for good, where its kind has one. */
  rescue(item: OutboxItem<OutboxPayload>, code: string, claimCovers: ClaimCovers): Promise<RescueResult>;
}

export function createSender(deps: SendDeps): Sender {
  // Each kind's sender takes only its own payloads, and is handed only those: an item's schema,
  // found by its type, checked it when it was read back.
  const byType = new Map<string, KindSender<OutboxPayload>>();
  for (const kind of KINDS) {
    const sender: KindSender<OutboxPayload> = kind.sender(deps);
    for (const payload of kind.payloads) byType.set(payload.shape.type.value, sender);
  }
  const senderOf = (item: OutboxItem<OutboxPayload>) => {
    const sender = byType.get(item.payload.type);
    if (!sender) throw new Error(`no kind of outbox item has the type ${item.payload.type}`);
    return sender;
  };
  return {
    async send(item, claimCovers) {
      if (!(await claimCovers())) throw new ClaimLost();
      return senderOf(item).send(item, claimCovers);
    },
    async rescue(item, code, claimCovers) {
      return (await senderOf(item).rescue?.(item, code, claimCovers)) ?? 'not_rescued';
    },
  };
}
