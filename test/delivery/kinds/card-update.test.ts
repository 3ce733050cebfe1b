import { WebClient } from '@slack/web-api';
import { beforeEach, describe, expect, it } from 'vitest';
import { cardUpdate, createReactionSync } from '../../../src/delivery/kinds/card-update.js';
import { createSender, type Sender } from '../../../src/delivery/outbox-registry.js';
import { createAgentSessions } from '../../../src/delivery/sessions.js';
import { createSlackCaller } from '../../../src/slack/caller.js';
import { md } from '../../../src/slack/mrkdwn.js';
import { openSqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import type { JobPatch, JobRecord, OutboxItem } from '../../../src/store/types.js';
import { useDeliveryWorld } from '../../helpers/delivery-world.js';
import { waitFor } from '../../helpers/http.js';
import { jobRecord, MENTION_THREAD } from '../../helpers/job-record.js';
import { BOT_TOKEN } from '../../helpers/slack-stand-in.js';

/** A mention's thread: the root is the person's message, the card the bot's reply there. */
const { threadTs: ROOT, cardTs: CARD } = MENTION_THREAD;
const claimCovers = async () => true;

const w = useDeliveryWorld();
let refreshed: string[];
let sender: Sender;
beforeEach(async () => {
  refreshed = [];
  const client = new WebClient(BOT_TOKEN, { slackApiUrl: w.slack.apiUrl, retryConfig: { retries: 0 } });
  sender = createSender(
    w.sendDeps({
      sessions: createAgentSessions(createSlackCaller({ client, logger: w.logger, redact: (text) => text })),
      home: { refresh: async (userId) => void refreshed.push(userId) },
    }),
  );
});
const send = (item: OutboxItem<ReturnType<typeof cardUpdate>[number]['payload']>, covers = claimCovers) =>
  sender.send(item, covers);

describe('a status card update queued', () => {
  it('update the status card where it is: its own message, or the root a command posted', () => {
    expect(cardUpdate(jobRecord({ id: 7, cardTs: '1.1', threadTs: '1.0' }))).toEqual([
      { jobId: 7, dedupeKey: null, payload: { type: 'update_root', channel: 'C0DOCS', ts: '1.1' } },
    ]);
    expect(
      cardUpdate(jobRecord({ cardTs: null, threadTs: '1.0', origin: 'command' }))[0]?.payload,
    ).toMatchObject({
      ts: '1.0',
    });
    // A mention's thread root is someone else's message: no card until the bot posted one.
    expect(cardUpdate(jobRecord({ cardTs: null, threadTs: '1.0', origin: 'mention' }))).toEqual([]);
    expect(cardUpdate(jobRecord({ cardTs: null, threadTs: null }))).toEqual([]);
  });
});

/** The sync under test, and what it acts on. */
async function open() {
  const sync = createReactionSync({ store: w.store, slack: w.gateway, logger: w.logger });
  /** The emoji the store says the root carries. */
  const recorded = async (id: number) => (await w.store.getJob(id))?.rootReaction;
  return {
    slack: w.slack,
    store: w.store,
    clock: w.clock,
    /** A mention's job in the thread at ROOT, its card at CARD, then changed by `patch`. */
    job: (patch: JobPatch) => w.job({ threadTs: ROOT, cardTs: CARD, ...patch }, { origin: 'mention' }),
    /** A command's job: its card is the thread's root, at ROOT. */
    commandJob: (patch: JobPatch) => w.job({ threadTs: ROOT, cardTs: ROOT, ...patch }),
    logged: w.logged,
    /** Syncs the emoji of a thread whose agent session Slack does not show, unless told it does. */
    sync: (job: JobRecord, sessionShown = false) => sync(job, undefined, sessionShown),
    recorded,
    onRoot: () => w.slack.reactionsOn('C0DOCS', ROOT),
  };
}

describe('the status emoji on a job thread’s root', () => {
  it('is put on the root while the agent works, and recorded', async () => {
    const root = await open();
    const job = await root.job({ phase: 'active' });
    await root.sync(job);
    expect(root.onRoot()).toEqual(['hourglass_flowing_sand']);
    expect(await root.recorded(job.id)).toBe('hourglass_flowing_sand');
  });

  it('is none while the agent works where Slack shows the thread’s session: one emoji call for a run', async () => {
    const root = await open();
    const job = await root.job({ phase: 'active' });
    await root.sync(job, true);
    expect(root.slack.calls).toEqual([]);
    await root.store.apply(
      { jobId: job.id, job: { phase: 'idle', lastOutcome: 'completed_pr' } },
      root.clock.at,
    );
    const done = (await root.store.getJob(job.id)) ?? job;
    await root.sync(done, true);
    expect(root.slack.calls.map((c) => [c.method, c.args.name])).toEqual([
      ['reactions.add', 'white_check_mark'],
    ]);
    // A follow-up's run: the check mark comes off while the session shows it working.
    await root.store.apply({ jobId: job.id, job: { phase: 'active' } }, root.clock.at);
    await root.sync((await root.store.getJob(job.id)) ?? job, true);
    expect(root.slack.calls.map((c) => c.method)).toEqual(['reactions.add', 'reactions.remove']);
    expect(root.onRoot()).toEqual([]);
    expect(await root.recorded(job.id)).toBeNull();
  });

  /** A job whose root shows the hourglass, then failed: `failed()` is the job as the store has it now. */
  async function failedWithHourglass() {
    const root = await open();
    const active = await root.job({ phase: 'active' });
    await root.sync(active);
    await root.store.apply(
      { jobId: active.id, job: { phase: 'idle', lastOutcome: 'failed' } },
      root.clock.at,
    );
    const failed = async () => (await root.store.getJob(active.id)) ?? active;
    return { root, active, failed };
  }

  it('is swapped for the outcome’s: the old one taken off first', async () => {
    const { root, active, failed } = await failedWithHourglass();
    await root.sync(await failed());
    expect(root.slack.calls.map((c) => [c.method, c.args.name])).toEqual([
      ['reactions.add', 'hourglass_flowing_sand'],
      ['reactions.remove', 'hourglass_flowing_sand'],
      ['reactions.add', 'x'],
    ]);
    expect(root.onRoot()).toEqual(['x']);
    expect(await root.recorded(active.id)).toBe('x');
  });

  it('records the old emoji taken off before the new one goes on: a deferred swap does not take it off twice', async () => {
    const { root, active, failed } = await failedWithHourglass();
    root.slack.fail('reactions.add', { error: 'ratelimited' });
    await expect(root.sync(await failed())).rejects.toMatchObject({ code: 'ratelimited' });
    expect(await root.recorded(active.id)).toBeNull();
    await root.sync(await failed());
    expect(root.slack.callsTo('reactions.remove')).toHaveLength(1);
    expect(root.onRoot()).toEqual(['x']);
    expect(await root.recorded(active.id)).toBe('x');
  });

  it('costs no Slack call when the root already shows the job’s state', async () => {
    const root = await open();
    const job = await root.job({
      phase: 'idle',
      lastOutcome: 'completed_pr',
      rootReaction: 'white_check_mark',
    });
    await root.sync(job);
    expect(root.slack.calls).toEqual([]);
  });

  it('is left alone while the job has no thread', async () => {
    const root = await open();
    const job = await root.job({ phase: 'active', threadTs: null, cardTs: null });
    await root.sync(job);
    expect(root.slack.calls).toEqual([]);
    expect(await root.recorded(job.id)).toBeNull();
  });

  it('is taken off, and none put on, once a new job took the thread over', async () => {
    const root = await open();
    const job = await root.job({ phase: 'retried', rootReaction: 'x' });
    root.slack.reactions.set(`C0DOCS:${ROOT}`, new Set(['x']));
    await root.sync(job);
    expect(root.slack.callsTo('reactions.add')).toEqual([]);
    expect(root.onRoot()).toEqual([]);
    expect(await root.recorded(job.id)).toBeNull();
  });

  it('goes on when someone already took the old emoji off', async () => {
    const root = await open();
    const job = await root.job({
      phase: 'idle',
      lastOutcome: 'archived',
      rootReaction: 'hourglass_flowing_sand',
    });
    await root.sync(job);
    expect(root.onRoot()).toEqual(['file_cabinet']);
    expect(await root.recorded(job.id)).toBe('file_cabinet');
  });

  it('is none on a command’s card, its thread’s root: no reactions.add call in the job’s life', async () => {
    const root = await open();
    const job = await root.commandJob({ phase: 'active' });
    await root.sync(job);
    for (const outcome of ['completed_pr', 'failed', 'archived'] as const) {
      await root.store.apply({ jobId: job.id, job: { phase: 'idle', lastOutcome: outcome } }, root.clock.at);
      await root.sync((await root.store.getJob(job.id)) ?? job);
    }
    expect(root.slack.calls).toEqual([]);
    expect(root.onRoot()).toEqual([]);
    expect(await root.recorded(job.id)).toBeNull();
  });

  it('is taken off a command’s card that earlier code gave one, then recorded as none: asked no more', async () => {
    const root = await open();
    // A job recorded before the card was (`cardTs` null): a command's card is still its root.
    const job = await root.commandJob({
      phase: 'active',
      cardTs: null,
      rootReaction: 'hourglass_flowing_sand',
    });
    root.slack.reactions.set(`C0DOCS:${ROOT}`, new Set(['hourglass_flowing_sand']));
    // Slack defers it: still recorded, so the card update delivered again takes it off.
    root.slack.fail('reactions.remove', { error: 'ratelimited' });
    await expect(root.sync(job)).rejects.toMatchObject({ code: 'ratelimited' });
    expect(await root.recorded(job.id)).toBe('hourglass_flowing_sand');
    await root.sync(job);
    expect(root.onRoot()).toEqual([]);
    expect(await root.recorded(job.id)).toBeNull();
    await root.store.apply(
      { jobId: job.id, job: { phase: 'idle', lastOutcome: 'completed_pr' } },
      root.clock.at,
    );
    await root.sync((await root.store.getJob(job.id)) ?? job);
    // The one refused, the one that took it off; nothing once the job ended.
    expect(root.slack.calls.map((c) => [c.method, c.args.name])).toEqual([
      ['reactions.remove', 'hourglass_flowing_sand'],
      ['reactions.remove', 'hourglass_flowing_sand'],
    ]);
  });

  it('fails the card update when Slack may take it later; a refusal for good only is logged, unrecorded', async () => {
    const root = await open();
    const job = await root.job({ phase: 'active' });
    root.slack.fail('reactions.add', { error: 'ratelimited' });
    await expect(root.sync(job)).rejects.toMatchObject({ code: 'ratelimited' });
    expect(await root.recorded(job.id)).toBeNull();
    expect(root.logged('could not update the status emoji')).toHaveLength(0);

    root.slack.fail('reactions.add', { error: 'invalid_auth' });
    await expect(root.sync(job)).resolves.toBeUndefined();
    expect(await root.recorded(job.id)).toBeNull();
    expect(root.logged('could not update the status emoji')).toHaveLength(1);

    await root.sync(job);
    expect(root.onRoot()).toEqual(['hourglass_flowing_sand']);
    expect(await root.recorded(job.id)).toBe('hourglass_flowing_sand');
  });
});

describe('a status card update', () => {
  /** A mention's job: the person's message is the thread's root (at ROOT), its card a reply there. */
  async function cardJob() {
    w.slack.humans.push({
      channel: 'C0DOCS',
      ts: ROOT,
      user: 'U0ALICE',
      text: 'Document the retry settings',
    });
    const cardTs = await w.gateway.postMessage({ channel: 'C0DOCS', threadTs: ROOT, text: md`card` });
    const job = await w.job(
      { phase: 'active', threadTs: ROOT, cardTs, runCount: 1, agentJobId: 'job_1' },
      { origin: 'mention' },
    );
    const update = () => {
      const [item] = cardUpdate(job);
      if (!item) throw new Error('no card to update');
      return item;
    };
    return { job, cardTs, update };
  }

  it('renders the card from the job as it is now, with its session, emoji and the requester’s App Home', async () => {
    const { job, cardTs, update } = await cardJob();
    const item = await w.claimed(update());
    await w.store.apply({ jobId: job.id, job: { phase: 'idle', lastOutcome: 'completed_pr' } }, w.clock.at);
    expect(await send(item)).toBeUndefined();
    const card = w.slack.messages.find((m) => m.ts === cardTs);
    expect(w.slack.callsTo('chat.update')).toHaveLength(1);
    expect(card?.text).not.toBe('card');
    expect(JSON.stringify(card?.blocks)).toContain('Document the retry settings');
    expect(w.slack.sessionOf('C0DOCS', ROOT)?.status).toBe('active');
    expect(w.slack.reactionsOn('C0DOCS', ROOT)).toEqual(['white_check_mark']);
    expect(w.slack.reactionsOn('C0DOCS', cardTs)).toEqual([]);
    expect(refreshed).toEqual(['U0ALICE']);
    expect(w.slack.invalid).toEqual([]);
  });

  it('edits a command’s card, its thread’s root, and its session, and puts no emoji on it', async () => {
    const cardTs = await w.gateway.postMessage({ channel: 'C0DOCS', text: md`card` });
    const job = await w.job({ phase: 'active', threadTs: cardTs, cardTs, runCount: 1, agentJobId: 'job_1' });
    const [update] = cardUpdate(job);
    if (!update) throw new Error('no card to update');
    const item = await w.claimed(update);
    await w.store.apply({ jobId: job.id, job: { phase: 'idle', lastOutcome: 'completed_pr' } }, w.clock.at);
    expect(await send(item)).toBeUndefined();
    expect(w.slack.callsTo('chat.update')).toHaveLength(1);
    expect(w.slack.sessionOf('C0DOCS', cardTs)?.status).toBe('active');
    expect(w.slack.callsTo('reactions.add')).toEqual([]);
    expect(w.slack.reactionsOn('C0DOCS', cardTs)).toEqual([]);
    expect(refreshed).toEqual(['U0ALICE']);
  });

  it('covers the updates queued before it: they are not sent again', async () => {
    const { job, update } = await cardJob();
    await w.store.enqueue([update()], w.clock.at);
    await w.store.enqueue([update()], w.clock.at);
    const [first] = await w.store.claimOutbox('i-test', w.clock.at, 1, 10_000);
    if (!first) throw new Error('nothing due');
    // Its payload is the one queued above.
    await send(first as OutboxItem<ReturnType<typeof update>['payload']>);
    expect(await w.store.latestCardUpdate(job.id)).toBeUndefined();
    expect(await w.store.claimOutbox('i-test', w.clock.at, 10, 10_000)).toEqual([]);
  });

  it('fails when Slack lost the card, and then touches nothing else', async () => {
    const { job, update } = await cardJob();
    const item = await w.claimed(update());
    w.slack.fail('chat.update', { error: 'message_not_found' });
    await expect(send(item)).rejects.toMatchObject({ code: 'message_not_found' });
    expect(w.slack.callsTo('agents.sessions.setStatus')).toEqual([]);
    expect(w.slack.callsTo('reactions.add')).toEqual([]);
    expect(refreshed).toEqual([]);
    expect((await w.store.getJob(job.id))?.rootReaction).toBeNull();
  });

  it('edits the card first; a session or emoji Slack defers fails the item, which then sends only what is missing', async () => {
    const { job, update } = await cardJob();
    const item = await w.claimed(update());
    w.slack.fail('agents.sessions.setStatus', { error: 'ratelimited' });
    await expect(send(item)).rejects.toMatchObject({ code: 'ratelimited' });
    expect(w.slack.callsTo('chat.update')).toHaveLength(1);
    expect(refreshed).toEqual([]);
    // Delivered again: the card already shows the job, so only the session goes; while the
    // session shows the agent working, the root has no emoji.
    await expect(send(item)).resolves.toBeUndefined();
    expect(w.slack.sessionOf('C0DOCS', ROOT)?.status).toBe('processing');
    expect(w.slack.callsTo('chat.update')).toHaveLength(1);
    expect(w.slack.callsTo('agents.sessions.setStatus')).toHaveLength(2);
    expect(w.slack.callsTo('reactions.add')).toEqual([]);
    expect(refreshed).toEqual(['U0ALICE']);
    // The job ended: the emoji deferred fails the item after the card and session were shown.
    w.slack.fail('reactions.add', { error: 'ratelimited' });
    await w.store.apply({ jobId: job.id, job: { phase: 'idle', lastOutcome: 'completed_pr' } }, w.clock.at);
    await expect(send(item)).rejects.toMatchObject({ code: 'ratelimited' });
    expect(w.slack.callsTo('chat.update')).toHaveLength(2);
    expect(w.slack.sessionOf('C0DOCS', ROOT)?.status).toBe('active');
    await expect(send(item)).resolves.toBeUndefined();
    expect(w.slack.callsTo('chat.update')).toHaveLength(2);
    expect(w.slack.callsTo('agents.sessions.setStatus')).toHaveLength(3);
    expect(w.slack.reactionsOn('C0DOCS', ROOT)).toEqual(['white_check_mark']);
    // The job changed meanwhile: the card is edited again, whatever the item did before.
    w.slack.fail('reactions.remove', { error: 'ratelimited' });
    await w.store.apply({ jobId: job.id, job: { lastOutcome: 'failed' } }, w.clock.at + 1);
    await expect(send(item)).rejects.toMatchObject({ code: 'ratelimited' });
    await w.store.apply({ jobId: job.id, job: { lastOutcome: 'archived' } }, w.clock.at + 2);
    await expect(send(item)).resolves.toBeUndefined();
    expect(w.slack.callsTo('chat.update')).toHaveLength(4);
    expect(w.slack.reactionsOn('C0DOCS', ROOT)).toEqual(['file_cabinet']);
  });

  it('is nothing to do for a job the store no longer has', async () => {
    const { update } = await cardJob();
    const item = await w.claimed(update());
    expect(await send({ ...item, jobId: null })).toBeUndefined();
    expect(await send({ ...item, jobId: 9_999 })).toBeUndefined();
    expect(w.slack.callsTo('chat.update')).toEqual([]);
  });
});

describe('status card updates', () => {
  it('sends a burst of card updates for one job as one chat.update of the latest state', async () => {
    // A store on the real clock: the running outbox claims and delivers by it.
    const store = openSqliteStore(':memory:');
    const cardTs = await w.gateway.postMessage({ channel: 'C0DOCS', text: md`card` });
    const { job } = await store.insertJob(
      {
        teamId: 'T0TEST',
        channelId: 'C0DOCS',
        requesterId: 'U0ALICE',
        instruction: 'Document retries',
        triggerKey: 'burst',
        responseUrl: null,
        pollIntervalMs: 1_000,
      },
      { kind: 'create', prompt: 'Document retries', authorId: 'U0ALICE', messageTs: null },
      Date.now(),
    );
    const update = {
      jobId: job.id,
      dedupeKey: null,
      payload: { type: 'update_root' as const, channel: 'C0DOCS', ts: cardTs },
    };
    // Five changes, each queuing an update in the same write; the last makes it run 5.
    for (let n = 1; n <= 5; n++)
      await store.apply(
        { jobId: job.id, job: { threadTs: cardTs, cardTs, runCount: n }, enqueue: [update] },
        Date.now(),
      );

    const outbox = w.outboxOn(store);
    outbox.start();
    try {
      await waitFor('every update done', async () => (await store.latestCardUpdate(job.id)) === undefined);
    } finally {
      await outbox.stop();
    }
    const updates = w.slack.callsTo('chat.update');
    expect(updates).toHaveLength(1);
    expect(JSON.stringify(updates[0]?.args.blocks)).toContain('*Runs*\\n5');
    await store.close();
  });
});
