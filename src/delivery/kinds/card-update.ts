import { z } from 'zod';
import { cardTsOf, statusCard, statusReaction } from '../../blocks/status-card.js';
import type { Logger } from '../../logging/logger.js';
import { mayPassLater, SlackCallError } from '../../slack/caller.js';
import type { SlackGateway } from '../../slack/gateway.js';
import type {
  JobRecord,
  JobsStore,
  NewOutboxItem,
  OutboxItem,
  PullRequestRecord,
} from '../../store/types.js';
import { BoundedCache } from '../../util/lru.js';
import { outboxKind } from '../outbox-kind.js';
import { createSessionSync } from '../sessions.js';

/**
 * Metadata event type of a job's status card. Its text (and the card's key, `root:…`) predates
 * the name "status card": stored cards carry it, so it stays.
 */
export const CARD_EVENT_TYPE = 'docs_agent_root';

/** The metadata key of a job's status card (`root:…` predates the name "status card"). */
export const cardKey = (jobId: number) => `root:${jobId}`;

/** The Slack metadata of a job's status card, so a restarted bot finds one it did not record. */
export const cardMetadata = (jobId: number) => ({ eventType: CARD_EVENT_TYPE, key: cardKey(jobId) });

/** A re-render of the status card at `ts`; its payload type `update_root` keeps the card's old name. */
const cardUpdatePayload = z.looseObject({
  type: z.literal('update_root'),
  channel: z.string(),
  ts: z.string(),
});

type CardUpdatePayload = z.infer<typeof cardUpdatePayload>;

/**
 * Re-renders the status card from the job as it is when the item is delivered (and the status
 * emoji on the thread's root).
 */
export function cardUpdate(job: JobRecord): NewOutboxItem<CardUpdatePayload>[] {
  const ts = cardTsOf(job);
  return ts
    ? [{ jobId: job.id, dedupeKey: null, payload: { type: 'update_root', channel: job.channelId, ts } }]
    : [];
}

/**
 * Swaps the status emoji on a job thread's root to match its status card. A refusal that may
 * pass (a rate limit, Slack down) is thrown, for the card update to be delivered again; one that
 * will not is logged and never fails the card update it goes with.
 */
export function createReactionSync(deps: {
  store: Pick<JobsStore, 'setRootReaction'>;
  slack: Pick<SlackGateway, 'addReaction' | 'removeReaction'>;
  logger: Logger;
}): (job: JobRecord, pullRequest: PullRequestRecord | undefined, sessionShown: boolean) => Promise<void> {
  const { store, slack, logger } = deps;
  return async (job, pullRequest, sessionShown) => {
    const wanted = statusReaction(job, pullRequest, sessionShown);
    if (wanted === job.rootReaction || !job.threadTs) return;
    const root = { channel: job.channelId, ts: job.threadTs };
    try {
      if (job.rootReaction) {
        await slack.removeReaction({ ...root, name: job.rootReaction });
        // Taken off: should the next call be deferred, the next attempt does not take it off again.
        if (wanted) await store.setRootReaction(job.id, null);
      }
      if (wanted) await slack.addReaction({ ...root, name: wanted });
      await store.setRootReaction(job.id, wanted);
    } catch (error) {
      if (error instanceof SlackCallError && mayPassLater(error)) throw error;
      logger.warn('could not update the status emoji on the thread root', { jobId: job.id, error });
    }
  };
}

/**
 * What a status card shows of its job and pull request, whatever the time: an item whose edit went
 * through says so, and is not edited again when its session or emoji is delivered later.
 */
const shownBy = (job: JobRecord, pullRequest: PullRequestRecord | undefined) =>
  JSON.stringify([{ ...job, rootReaction: null, sessionStatus: null }, pullRequest ?? null]);

/** How many card updates' edits are remembered while their session or emoji waits, and for how long (ms). */
const EDITED = { items: 1_000, ttlMs: 60 * 60_000 } as const;

/**
 * The status card's updates: the card re-rendered from the job as it is when delivered, then its
 * session, the emoji on the thread's root and the requester's App Home. Queued in the same write
 * as every change of the job, one at a time per job, and superseded by a newer one. The card's
 * edit goes first: it is what people read. When Slack defers or refuses the session or emoji for
 * now, the item is delivered again later, and then sends only what is still not shown.
 */
export const cardUpdates = outboxKind({
  payloads: [cardUpdatePayload],
  eventType: CARD_EVENT_TYPE,
  items: {
    /** A re-render of the status card: never deduplicated, newer ones supersede older ones. */
    cardUpdate: null,
  },
  sender(deps) {
    const { store, slack, logger, now } = deps;
    const syncSession = deps.sessions
      ? createSessionSync({ sessions: deps.sessions, store, logger })
      : undefined;
    const syncReaction = createReactionSync({ store, slack, logger });
    const edited = new BoundedCache<string>(EDITED.items, EDITED.ttlMs);
    return {
      async send(item: OutboxItem<CardUpdatePayload>): Promise<undefined> {
        if (item.jobId === null) return;
        // Read before the job: every update queued up to here is covered by the rendering below
        // (each was queued in the same write as the change it shows).
        const upto = await store.latestCardUpdate(item.jobId);
        const job = await store.getJob(item.jobId);
        if (!job) return;
        // Followed to its end when the operator gave read access to its host (`GITHUB_TOKEN`).
        const pullRequest = await store.pullRequestOfJob(job.id);
        const key = String(item.id);
        // Only an item delivered again after its session or emoji failed is remembered.
        const before = edited.get(key);
        if (before === undefined || before !== shownBy(job, pullRequest)) {
          const card = statusCard(job, now(), deps.hints, pullRequest);
          await slack.updateMessage({
            channel: item.payload.channel,
            ts: item.payload.ts,
            text: card.text,
            blocks: card.blocks,
          });
        }
        // Rate limits: a burst of changes costs one chat.update, not one per change.
        if (upto !== undefined && upto > item.id)
          await store.supersedeCardUpdates(job.id, upto, deps.instanceId, now());
        try {
          const sessionShown = (await syncSession?.(job, pullRequest)) ?? false;
          await syncReaction(job, pullRequest, sessionShown);
        } catch (error) {
          edited.set(key, shownBy(job, pullRequest));
          throw error;
        }
        edited.delete(key);
        await deps.home?.refresh(job.requesterId);
      },
    };
  },
});
