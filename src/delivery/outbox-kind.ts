import type { z } from 'zod';
import type { RenderHints } from '../blocks/messages.js';
import type { Logger } from '../logging/logger.js';
import type { SlackGateway } from '../slack/gateway.js';
import type { JobsStore, OutboxItem, OutboxStore, PullRequestsStore } from '../store/types.js';
import type { StepSender } from './kinds/workflow-step.js';
import type { AgentSessions } from './sessions.js';

/*
 * What every kind of outbox item is (each one a file in `kinds/`, listed in the registry): the
 * schemas of its payloads, its named items with their dedupe keys, and how it is sent. A payload's
 * TypeScript type is inferred from its schema, the one declaration of its shape: the schema
 * checks what is read back from the store (it may have been written by another release), and the
 * type checks what the kind's builders queue.
 */

/** A payload's schema: an object whose `type` names it; fields it does not know are kept. */
export type PayloadSchema = z.ZodObject<{ type: z.ZodLiteral<string> }, z.core.$loose>;

/**
 * A kind's named items, each with the dedupe key it is queued under (null: never deduplicated).
 * Keys are the store's uniqueness keys and the metadata a restarted bot reads back from Slack:
 * written by one release and read by the next, so their text never changes (a test pins each).
 */
export type NamedItems = Record<string, ((args: never) => string) | null>;

/** Says whether the claim on an item still covers a call about to start, renewing it if needed. */
export type ClaimCovers = () => Promise<boolean>;

/**
 * What delivering an item came to: done (undefined), given up without an error (Slack's code,
 * already logged), or not yet (look again at `laterAt`).
 */
export type Delivery = undefined | string | { laterAt: number };

/**
 * What a rescue did: the post is in Slack (`delivered`), no rescue helps (`not_rescued`: the item
 * is given up), another instance holds the item (`claim_lost`), or the re-send met a refusal that
 * may pass (`retry`: the item is tried again, and finds the re-send if it was made).
 */
export type RescueResult = 'delivered' | 'not_rescued' | 'claim_lost' | 'retry';

/** The claim on an item was taken over before a post: the post is not made, nothing is written. */
export class ClaimLost extends Error {
  override name = 'ClaimLost';
}

/** What the kinds' sending is built from, once per outbox. */
export interface SendDeps {
  store: Pick<OutboxStore, 'latestCardUpdate' | 'supersedeCardUpdates'> &
    Pick<JobsStore, 'getJob' | 'setRootReaction' | 'setSessionStatus'> &
    Pick<PullRequestsStore, 'pullRequestOfJob'>;
  /** This process's instance id, under which it claims the items it delivers. */
  instanceId: string;
  slack: SlackGateway;
  logger: Logger;
  /** How follow-ups work, for the status card's hint. */
  hints: RenderHints;
  /** Slack's agent sessions: each card update also shows the job's state as its thread's session. */
  sessions?: AgentSessions;
  /**
   * Refreshes a requester's App Home after their job's card changed. Declared here and
   * connected by the composition root (the App Home publisher), so delivery never reaches up.
   */
  home?: { refresh(userId: string): Promise<void> };
  /** Answers Workflow Builder steps; without it their items are given up. */
  steps?: Pick<StepSender, 'send'>;
  now: () => number;
}

/** How one kind is sent, for items whose payload its schemas checked. */
export interface KindSender<P extends { type: string }> {
  send(item: OutboxItem<P>, claimCovers: ClaimCovers): Promise<Delivery>;
  /** Another way to say it once Slack refused the item for good; without it, the item is given up. */
  rescue?(item: OutboxItem<P>, code: string, claimCovers: ClaimCovers): Promise<RescueResult>;
}

type Schemas = readonly [PayloadSchema, ...PayloadSchema[]];

export interface OutboxKind<V extends Schemas, I extends NamedItems> {
  /** The payloads this kind queues, one schema per `type`. */
  payloads: V;
  items: I;
  /** The metadata event type its Slack messages carry, when they carry one. */
  eventType?: string;
  sender(deps: SendDeps): KindSender<z.infer<V[number]>>;
}

/** A kind of outbox item, its sender typed by its own payloads. */
export const outboxKind = <const V extends Schemas, const I extends NamedItems>(kind: OutboxKind<V, I>) =>
  kind;

/** The metadata key of a post queued without a dedupe key: its outbox id. */
export const unkeyedPostKey = (outboxId: number) => `outbox-${outboxId}`;
