import { afterEach, describe, expect, it, vi } from 'vitest';
import { leasesFor } from '../../src/jobs/job-context.js';

const DELIVERY = leasesFor(6_000).delivery;

import { stepWait } from '../../src/delivery/kinds/workflow-step.js';
import { createOutbox, OUTBOX_MAX_RETRY_MS, type OutboxOptions } from '../../src/delivery/outbox.js';
import type { OutboxPayload } from '../../src/delivery/outbox-registry.js';
import { createLogger } from '../../src/logging/logger.js';
import { SlackCallError } from '../../src/slack/caller.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { JobRecord, NewJob, NewOutboxItem, Store } from '../../src/store/types.js';
import type { YieldGate } from '../../src/util/yield-gate.js';
import { fakeSlack } from '../helpers/fake-network.js';
import { waitFor } from '../helpers/http.js';
import { MENTION_THREAD } from '../helpers/job-record.js';

const T0 = Date.parse('2026-09-01T12:00:00.000Z');
const INSTANCE = 'instance-outbox-1';

interface Row {
  attempts: number;
  deliveredAt: number | null;
  deadAt: number | null;
  lastError: string | null;
  nextAttemptAt: number;
  claimedBy: string | null;
  claimedUntil: number | null;
}

/** An outbox over a real store in memory, a fake Slack and a clock the test moves. */
function world(
  options: {
    bare?: boolean;
    /** Idle sleep of the loop; `default` passes none. */
    idleMs?: number | 'default';
    gate?: YieldGate;
    wrap?: (store: Store) => Store;
    /** What answers Workflow Builder steps; none by default, so their items are given up. */
    steps?: OutboxOptions['steps'];
    /** This process's clock for claims; the real one by default. */
    monotonic?: () => number;
  } = {},
) {
  const clock = { at: T0 };
  // The store keeps the same clock, so claims run out when the test's time says.
  const store = openSqliteStore(':memory:', { now: () => clock.at });
  const slack = fakeSlack();
  const logs: string[] = [];
  const givenUp = vi.fn();
  const home = { refresh: vi.fn(async () => {}), publish: vi.fn(async () => {}) };
  const outbox = createOutbox({
    store: options.wrap ? options.wrap(store) : store,
    instanceId: INSTANCE,
    lease: DELIVERY,
    slack,
    logger: createLogger({ level: 'debug', secrets: [], write: (l) => logs.push(l) }),
    hints: { mode: 'all', asideMarker: '//', prLinkHosts: ['github.com'] },
    // Bare: no App Home to refresh and no one counting what is given up.
    ...(options.bare ? {} : { home, onGivenUp: givenUp }),
    ...(options.gate ? { gate: options.gate } : {}),
    ...(options.steps ? { steps: options.steps } : {}),
    ...(options.monotonic ? { monotonic: options.monotonic } : {}),
    batchSize: 3,
    ...(options.idleMs === 'default' ? {} : { idleMs: options.idleMs ?? 10 }),
    now: () => clock.at,
  });
  const row = (id: number) =>
    store.db
      .prepare(
        `SELECT attempts, delivered_at AS deliveredAt, dead_at AS deadAt, last_error AS lastError,
                next_attempt_at AS nextAttemptAt, claimed_by AS claimedBy, claimed_until AS claimedUntil
         FROM outbox WHERE id = ?`,
      )
      .get(id) as Row;
  /** Queues the item (when given) and makes one delivery attempt of what is due; the item's row after. */
  async function attempt(item?: NewOutboxItem): Promise<Row & { id: number }> {
    if (item) await store.enqueue([item], clock.at);
    const [claimed] = await store.claimOutbox(INSTANCE, clock.at, 1, DELIVERY.leaseMs);
    if (!claimed) throw new Error('nothing due');
    await outbox.deliver(claimed);
    return { id: claimed.id, ...row(claimed.id) };
  }
  return { store, slack, logs, clock, givenUp, home, outbox, row, attempt };
}

type World = ReturnType<typeof world>;
let current: World | undefined;
const open = (options: Parameters<typeof world>[0] = {}) => {
  current = world(options);
  return current;
};
afterEach(async () => {
  await current?.outbox.stop();
  await current?.store.close();
  current = undefined;
});

const post = (fields: Partial<Extract<OutboxPayload, { type: 'post' }>> = {}): NewOutboxItem => ({
  jobId: null,
  dedupeKey: 'outcome:7',
  payload: {
    type: 'post',
    channel: 'C0DOCS',
    threadTs: '1700000000.000100',
    text: 'Done: <https://github.com/acme/docs/pull/7|the pull request>',
    eventType: 'docs_agent_outcome',
    ...fields,
  },
});

const slackError = (code: string, options: { retryAfterMs?: number } = {}) =>
  new SlackCallError('chat.postMessage', code, options);

/** A command's job, unless `fields` say otherwise. */
async function insertJob(w: World, fields: Partial<NewJob> = {}) {
  const { job } = await w.store.insertJob(
    {
      teamId: 'T0TEST',
      channelId: 'C0DOCS',
      requesterId: 'U0ALICE',
      instruction: 'Document retries',
      triggerKey: `command:${Math.random()}`,
      responseUrl: null,
      pollIntervalMs: 1_000,
      ...fields,
    },
    { kind: 'create', prompt: 'Document retries', authorId: 'U0ALICE', messageTs: null },
    w.clock.at,
  );
  return job;
}

describe('delivering a thread post', () => {
  it('posts it with metadata naming it, and records it delivered, unclaimed', async () => {
    const w = open();
    const done = await w.attempt(post({ about: { kind: 'outcome', run: 2, source: null } }));
    expect(w.slack.postMessage).toHaveBeenCalledExactlyOnceWith({
      channel: 'C0DOCS',
      threadTs: '1700000000.000100',
      text: 'Done: <https://github.com/acme/docs/pull/7|the pull request>',
      metadata: {
        eventType: 'docs_agent_outcome',
        key: 'outcome:7',
        fields: { kind: 'outcome', run: 2, source: null },
      },
    });
    expect(w.slack.findPosted).not.toHaveBeenCalled();
    expect(done).toMatchObject({ attempts: 1, deliveredAt: T0, deadAt: null, lastError: null });
    expect(done).toMatchObject({ claimedBy: null, claimedUntil: null });
  });

  it('names a post without a key by its id, and sends its blocks', async () => {
    const w = open();
    const blocks = [{ type: 'section', text: { type: 'mrkdwn', text: 'hi' } }];
    const done = await w.attempt({ ...post({ blocks }), dedupeKey: null });
    expect(w.slack.postMessage).toHaveBeenCalledExactlyOnceWith(
      expect.objectContaining({
        blocks,
        metadata: { eventType: 'docs_agent_outcome', key: `outbox-${done.id}` },
      }),
    );
  });

  it('after an attempt that may have reached Slack, looks for it first and does not post it twice', async () => {
    const w = open();
    w.slack.postMessage.mockRejectedValueOnce(new Error('socket hang up'));
    const first = await w.attempt(post());
    expect(first).toMatchObject({ deliveredAt: null, lastError: 'unexpected_error' });
    w.clock.at = first.nextAttemptAt;
    w.slack.findPosted.mockResolvedValueOnce('1700000000.000200');
    const second = await w.attempt();
    expect(w.slack.findPosted).toHaveBeenCalledExactlyOnceWith({
      channel: 'C0DOCS',
      threadTs: '1700000000.000100',
      metadata: { eventType: 'docs_agent_outcome', key: 'outcome:7' },
    });
    expect(w.slack.postMessage).toHaveBeenCalledTimes(1);
    expect(second).toMatchObject({ attempts: 2, deliveredAt: first.nextAttemptAt, lastError: null });
  });

  it('posts again when the search finds nothing, or when Slack can never search; waits when it cannot now', async () => {
    const w = open();
    w.slack.postMessage.mockRejectedValueOnce(new Error('socket hang up'));
    const first = await w.attempt(post());
    w.clock.at = first.nextAttemptAt;
    w.slack.findPosted.mockRejectedValueOnce(new SlackCallError('conversations.replies', 'ratelimited'));
    const waiting = await w.attempt();
    expect(waiting).toMatchObject({ deliveredAt: null, lastError: 'ratelimited' });
    expect(w.slack.postMessage).toHaveBeenCalledTimes(1);
    w.clock.at = waiting.nextAttemptAt;
    w.slack.findPosted.mockRejectedValueOnce(new SlackCallError('conversations.replies', 'missing_scope'));
    expect(await w.attempt()).toMatchObject({ attempts: 3, deliveredAt: waiting.nextAttemptAt });
    expect(w.slack.postMessage).toHaveBeenCalledTimes(2);
  });
});

describe('when Slack fails', () => {
  it('retries a passing failure with a backoff that doubles up to its ceiling', async () => {
    const w = open();
    w.slack.postMessage.mockRejectedValue(slackError('internal_error'));
    const waits: number[] = [];
    await w.store.enqueue([post()], w.clock.at);
    for (let i = 0; i < 11; i++) {
      const before = w.clock.at;
      const r = await w.attempt();
      expect(r).toMatchObject({
        deliveredAt: null,
        deadAt: null,
        lastError: 'internal_error',
        claimedBy: null,
      });
      waits.push(r.nextAttemptAt - before);
      w.clock.at = r.nextAttemptAt;
    }
    expect(w.logs.filter((l) => l.includes('Slack delivery failed; will retry'))).toHaveLength(11);
    expect(w.logs.at(-1)).toContain('"code":"internal_error"');
    expect(waits).toEqual([
      1_000,
      2_000,
      4_000,
      8_000,
      16_000,
      32_000,
      64_000,
      128_000,
      256_000,
      OUTBOX_MAX_RETRY_MS,
      OUTBOX_MAX_RETRY_MS,
    ]);
    expect(w.givenUp).not.toHaveBeenCalled();
  });

  it('waits as long as Slack asks on a rate limit, but at least 100 ms', async () => {
    const w = open();
    w.slack.postMessage.mockRejectedValueOnce(slackError('ratelimited', { retryAfterMs: 30_000 }));
    const limited = await w.attempt(post());
    expect(limited.nextAttemptAt - T0).toBe(30_000);
    w.clock.at = limited.nextAttemptAt;
    w.slack.postMessage.mockRejectedValueOnce(slackError('ratelimited', { retryAfterMs: 5 }));
    const brief = await w.attempt();
    expect(brief.nextAttemptAt - w.clock.at).toBe(100);
  });

  it('delivers an item Slack’s limit deferred when its turn comes, without a warning', async () => {
    const w = open();
    w.slack.postMessage.mockRejectedValueOnce(
      new SlackCallError('chat.postMessage', 'ratelimited', { retryAfterMs: 2_500, deferred: true }),
    );
    const held = await w.attempt(post());
    expect(held).toMatchObject({ deliveredAt: null, lastError: 'ratelimited' });
    expect(held.nextAttemptAt - T0).toBe(2_500);
    expect(w.logs.filter((l) => l.includes('"level":"warn"'))).toEqual([]);
    expect(w.logs.filter((l) => l.includes('Slack delivery waits for its turn'))).toHaveLength(1);
    // A 429 Slack gave is a failure, and warned about.
    w.clock.at = held.nextAttemptAt;
    w.slack.postMessage.mockRejectedValueOnce(slackError('ratelimited', { retryAfterMs: 3_000 }));
    await w.attempt();
    expect(w.logs.filter((l) => l.includes('Slack delivery failed; will retry'))).toHaveLength(1);
  });

  it('gives up a message Slack refuses for good, and says so once', async () => {
    const w = open();
    w.slack.addReaction.mockRejectedValueOnce(new SlackCallError('reactions.add', 'invalid_arguments'));
    const dead = await w.attempt({
      jobId: null,
      dedupeKey: null,
      payload: { type: 'reaction', channel: 'C0DOCS', ts: '1.2', name: 'eyes' },
    });
    expect(dead).toMatchObject({
      deliveredAt: null,
      deadAt: T0,
      lastError: 'invalid_arguments',
      claimedBy: null,
    });
    expect(w.givenUp).toHaveBeenCalledTimes(1);
    expect(w.logs.filter((l) => l.includes('Slack refused a message for good'))).toEqual([
      expect.stringContaining('"code":"invalid_arguments"'),
    ]);
  });

  it('gives up an item it cannot read, and delivers the others', async () => {
    const w = open();
    await w.store.enqueue([post()], w.clock.at);
    w.store.db.prepare(`UPDATE outbox SET payload = '{"type":"carrier_pigeon"}'`).run();
    const bad = await w.attempt();
    expect(bad).toMatchObject({
      deadAt: T0,
      deliveredAt: null,
      lastError: 'invalid_payload',
      claimedBy: null,
    });
    expect(w.logs.filter((l) => l.includes('an outbox item cannot be read; it is given up'))).toEqual([
      expect.stringContaining(`"outboxId":${bad.id}`),
    ]);
    expect(w.slack.postMessage).not.toHaveBeenCalled();
    expect(await w.attempt({ ...post(), dedupeKey: 'next' })).toMatchObject({ deliveredAt: T0 });
  });
});

describe('a thread post Slack refuses for good still reaches its reader', () => {
  it('shortens a post that is too long', async () => {
    const w = open();
    w.slack.postMessage.mockRejectedValueOnce(slackError('msg_too_long'));
    const long = 'word '.repeat(2_000);
    const done = await w.attempt(post({ text: long, about: { kind: 'outcome', run: 2, source: null } }));
    expect(done).toMatchObject({ deliveredAt: T0, deadAt: null, lastError: 'msg_too_long' });
    const retry = w.slack.postMessage.mock.calls[1]?.[0];
    expect(retry).toMatchObject({
      channel: 'C0DOCS',
      threadTs: '1700000000.000100',
      metadata: {
        eventType: 'docs_agent_outcome',
        key: 'outcome:7',
        fields: { kind: 'outcome', run: 2, source: null, thread: '1700000000.000100' },
      },
    });
    expect(retry?.text.length).toBeLessThanOrEqual(3_000);
    expect(retry?.text.length).toBeGreaterThan(2_900);
    expect(long.startsWith(retry?.text.replace(/…$/, '') ?? 'x')).toBe(true);
    expect(w.givenUp).not.toHaveBeenCalled();
  });

  it('sends the requester a post whose thread is gone, directly, saying why', async () => {
    const w = open();
    const job = await insertJob(w);
    w.slack.postMessage.mockRejectedValueOnce(slackError('is_archived'));
    const done = await w.attempt({ ...post(), jobId: job.id });
    expect(done).toMatchObject({ deliveredAt: T0, deadAt: null, lastError: 'is_archived' });
    const direct = w.slack.postMessage.mock.calls[1]?.[0];
    expect(direct?.channel).toBe('U0ALICE');
    expect(direct?.threadTs).toBeUndefined();
    expect(direct?.text).toBe(
      ":information_source: I could not post in the job's thread in <#C0DOCS> (Slack said `is_archived`), so here it is directly:\nDone: <https://github.com/acme/docs/pull/7|the pull request>",
    );
    expect(w.logs.filter((l) => l.includes('told the requester directly'))).toEqual([
      expect.stringContaining('"code":"is_archived"'),
    ]);
  });

  it('gives up a refused post it cannot send elsewhere: no job, another refusal, or a rescue that fails', async () => {
    const w = open();
    w.slack.postMessage.mockRejectedValueOnce(slackError('is_archived'));
    expect(await w.attempt(post())).toMatchObject({ deadAt: T0, lastError: 'is_archived' });
    w.slack.postMessage.mockRejectedValueOnce(slackError('restricted_action'));
    const job = await insertJob(w);
    expect(await w.attempt({ ...post({ eventType: 'b' }), jobId: job.id, dedupeKey: 'b' })).toMatchObject({
      deadAt: T0,
      lastError: 'restricted_action',
    });
    w.slack.postMessage.mockRejectedValueOnce(slackError('not_in_channel'));
    w.slack.postMessage.mockRejectedValueOnce(slackError('user_not_found'));
    expect(await w.attempt({ ...post({ eventType: 'c' }), jobId: job.id, dedupeKey: 'c' })).toMatchObject({
      deadAt: T0,
      lastError: 'not_in_channel',
    });
    expect(w.logs.filter((l) => l.includes('rescue of a refused message failed'))).toEqual([
      expect.stringContaining('"code":"not_in_channel"'),
    ]);
    expect(w.givenUp).toHaveBeenCalledTimes(3);
    expect(w.slack.postMessage).toHaveBeenCalledTimes(4);
  });

  it('does not rescue what is not a thread post', async () => {
    const w = open();
    const job = await insertJob(w);
    w.slack.postEphemeral.mockRejectedValueOnce(slackError('is_archived'));
    const dead = await w.attempt({
      jobId: job.id,
      dedupeKey: null,
      payload: { type: 'ephemeral', channel: 'C0DOCS', user: 'U0ALICE', threadTs: null, text: 'Not allowed' },
    });
    expect(dead).toMatchObject({ deadAt: T0, lastError: 'is_archived' });
    expect(w.slack.postMessage).not.toHaveBeenCalled();
  });
});

describe('private answers', () => {
  it('answers through the response URL, and privately in the channel once it has expired', async () => {
    const w = open();
    const respond = {
      type: 'respond' as const,
      responseUrl: 'https://hooks.slack.com/commands/1',
      text: 'Started',
      fallback: { channel: 'C0DOCS', user: 'U0ALICE' },
    };
    expect(await w.attempt({ jobId: null, dedupeKey: null, payload: respond })).toMatchObject({
      deliveredAt: T0,
    });
    expect(w.slack.respond).toHaveBeenCalledExactlyOnceWith('https://hooks.slack.com/commands/1', 'Started');
    expect(w.slack.postEphemeral).not.toHaveBeenCalled();
    w.slack.respond.mockRejectedValueOnce(new SlackCallError('respond', 'expired_url'));
    expect(await w.attempt({ jobId: null, dedupeKey: null, payload: respond })).toMatchObject({
      deliveredAt: T0,
    });
    expect(w.slack.postEphemeral).toHaveBeenCalledExactlyOnceWith({
      channel: 'C0DOCS',
      user: 'U0ALICE',
      text: 'Started',
    });
  });

  it('gives up an expired response URL with nowhere else to answer, and retries other failures', async () => {
    const w = open();
    const respond = {
      type: 'respond' as const,
      responseUrl: 'https://hooks.slack.com/commands/1',
      text: 'Started',
    };
    w.slack.respond.mockRejectedValueOnce(new SlackCallError('respond', 'expired_url'));
    expect(await w.attempt({ jobId: null, dedupeKey: null, payload: respond })).toMatchObject({
      deadAt: T0,
      lastError: 'expired_url',
    });
    w.slack.respond.mockRejectedValueOnce(new SlackCallError('respond', 'http_500'));
    expect(
      await w.attempt({
        jobId: null,
        dedupeKey: null,
        payload: { ...respond, fallback: { channel: 'C0DOCS', user: 'U0ALICE' } },
      }),
    ).toMatchObject({ deadAt: null, deliveredAt: null, lastError: 'http_500' });
    expect(w.slack.postEphemeral).not.toHaveBeenCalled();
  });

  it('posts a private note in the thread it is about, or in the channel', async () => {
    const w = open();
    const note = { type: 'ephemeral' as const, channel: 'C0DOCS', user: 'U0ALICE', text: 'Held' };
    await w.attempt({ jobId: null, dedupeKey: null, payload: { ...note, threadTs: '1.2' } });
    await w.attempt({ jobId: null, dedupeKey: null, payload: { ...note, threadTs: null } });
    expect(w.slack.postEphemeral.mock.calls).toEqual([
      [{ channel: 'C0DOCS', user: 'U0ALICE', text: 'Held', threadTs: '1.2' }],
      [{ channel: 'C0DOCS', user: 'U0ALICE', text: 'Held' }],
    ]);
  });

  it('adds a reaction where it is asked for', async () => {
    const w = open();
    await w.attempt({
      jobId: null,
      dedupeKey: null,
      payload: { type: 'reaction', channel: 'C0DOCS', ts: '1.2', name: 'eyes' },
    });
    expect(w.slack.addReaction).toHaveBeenCalledExactlyOnceWith({
      channel: 'C0DOCS',
      ts: '1.2',
      name: 'eyes',
    });
  });

  it('posts a notification to its channel, and gives it up where the bot cannot post', async () => {
    const w = open();
    const notify = {
      type: 'notify' as const,
      channel: 'C0NOTIFY',
      text: 'Job done',
      eventType: 'docs_agent_notice',
    };
    expect(await w.attempt({ jobId: null, dedupeKey: 'n1', payload: notify })).toMatchObject({
      deliveredAt: T0,
    });
    expect(w.slack.postMessage).toHaveBeenCalledExactlyOnceWith(
      expect.objectContaining({ channel: 'C0NOTIFY', text: 'Job done' }),
    );
    w.slack.postMessage.mockRejectedValueOnce(slackError('not_in_channel'));
    expect(await w.attempt({ jobId: null, dedupeKey: 'n2', payload: notify })).toMatchObject({
      deadAt: T0,
      deliveredAt: null,
      lastError: 'not_in_channel',
    });
    expect(w.givenUp).toHaveBeenCalledTimes(1);
  });
});

describe('the status card', () => {
  /** A mention's thread: the person's message is its root, the card the bot's reply there. */
  const { threadTs: ROOT, cardTs: CARD } = MENTION_THREAD;
  async function cardJob(w: World, fields: Partial<JobRecord>) {
    const job = await insertJob(w, { origin: 'mention' });
    await w.store.apply({ jobId: job.id, job: { threadTs: ROOT, cardTs: CARD, ...fields } }, w.clock.at);
    return job;
  }
  const update = (jobId: number): NewOutboxItem => ({
    jobId,
    dedupeKey: null,
    payload: { type: 'update_root', channel: 'C0DOCS', ts: CARD },
  });
  const reactions = (w: World) => ({
    added: w.slack.addReaction.mock.calls.map(([r]) => r),
    removed: w.slack.removeReaction.mock.calls.map(([r]) => r),
  });

  it('updates the card, swaps the emoji on the thread root to match, and refreshes the requester’s Home', async () => {
    const w = open();
    const job = await cardJob(w, { phase: 'active', rootReaction: null });
    expect(await w.attempt(update(job.id))).toMatchObject({ deliveredAt: T0, lastError: null });
    expect(w.slack.updateMessage).toHaveBeenCalledExactlyOnceWith(
      expect.objectContaining({ channel: 'C0DOCS', ts: CARD }),
    );
    const root = { channel: 'C0DOCS', ts: ROOT };
    expect(reactions(w)).toEqual({ added: [{ ...root, name: 'hourglass_flowing_sand' }], removed: [] });
    expect((await w.store.getJob(job.id))?.rootReaction).toBe('hourglass_flowing_sand');
    expect(w.home.refresh).toHaveBeenCalledExactlyOnceWith('U0ALICE');

    await w.store.apply({ jobId: job.id, job: { phase: 'idle', lastOutcome: 'completed_pr' } }, T0);
    await w.attempt(update(job.id));
    expect(reactions(w)).toEqual({
      added: [
        { ...root, name: 'hourglass_flowing_sand' },
        { ...root, name: 'white_check_mark' },
      ],
      removed: [{ ...root, name: 'hourglass_flowing_sand' }],
    });
    expect((await w.store.getJob(job.id))?.rootReaction).toBe('white_check_mark');

    // Unchanged: no reaction calls.
    await w.attempt(update(job.id));
    expect(w.slack.addReaction).toHaveBeenCalledTimes(2);
    expect(w.slack.removeReaction).toHaveBeenCalledTimes(1);
  });

  it('takes the emoji off a root whose job another took over, and adds none', async () => {
    const w = open();
    const job = await cardJob(w, { phase: 'retried', rootReaction: 'x' });
    await w.attempt(update(job.id));
    expect(reactions(w)).toEqual({
      added: [],
      removed: [{ channel: 'C0DOCS', ts: ROOT, name: 'x' }],
    });
    expect((await w.store.getJob(job.id))?.rootReaction).toBeNull();
  });

  it('leaves the emoji alone for a card with no thread, and a failed swap does not fail the update', async () => {
    const w = open();
    const job = await insertJob(w);
    await w.store.apply({ jobId: job.id, job: { cardTs: CARD, phase: 'active' } }, T0);
    expect(await w.attempt(update(job.id))).toMatchObject({ deliveredAt: T0 });
    expect(reactions(w)).toEqual({ added: [], removed: [] });

    const other = await cardJob(w, { phase: 'active', rootReaction: null });
    w.slack.addReaction.mockRejectedValueOnce(
      new SlackCallError('reactions.add', 'missing_scope', { platform: true }),
    );
    expect(await w.attempt(update(other.id))).toMatchObject({ deliveredAt: T0, lastError: null });
    expect((await w.store.getJob(other.id))?.rootReaction).toBeNull();
    expect(w.logs.filter((l) => l.includes('could not update the status emoji on the thread root'))).toEqual([
      expect.stringContaining(`"jobId":${other.id}`),
    ]);
  });

  it('needs no App Home and no one counting what is given up', async () => {
    const w = open({ bare: true });
    const job = await cardJob(w, { phase: 'active', rootReaction: null });
    expect(await w.attempt(update(job.id))).toMatchObject({ deliveredAt: T0, lastError: null });
    w.slack.postMessage.mockRejectedValueOnce(slackError('restricted_action'));
    expect(await w.attempt(post())).toMatchObject({ deadAt: T0, lastError: 'restricted_action' });
    const notify = {
      type: 'notify' as const,
      channel: 'C0NOTIFY',
      text: 'Done',
      eventType: 'docs_agent_notice',
    };
    w.slack.postMessage.mockRejectedValueOnce(slackError('not_in_channel'));
    expect(await w.attempt({ jobId: null, dedupeKey: 'n', payload: notify })).toMatchObject({
      deadAt: T0,
      lastError: 'not_in_channel',
    });
  });
});

describe('what a kind decides', () => {
  const wait = stepWait('Fx0WAIT', 7, T0 + 60_000);

  it('an item its kind cannot send yet is looked at again when the kind says, unclaimed and with no error', async () => {
    const w = open({ steps: { send: async () => ({ laterAt: T0 + 10_000 }) } });
    expect(await w.attempt(wait)).toMatchObject({
      deliveredAt: null,
      deadAt: null,
      lastError: null,
      nextAttemptAt: T0 + 10_000,
      claimedBy: null,
      claimedUntil: null,
    });
  });

  it('an item its kind gives up is given up once and counted, also with no one counting', async () => {
    const w = open();
    expect(await w.attempt(wait)).toMatchObject({ deadAt: T0, lastError: 'no_workflow_steps' });
    expect(w.givenUp).toHaveBeenCalledOnce();
    const bare = open({ bare: true });
    expect(await bare.attempt(wait)).toMatchObject({ deadAt: T0, lastError: 'no_workflow_steps' });
    // Given up without a fault of its own: nothing is said to have failed.
    expect(bare.logs.filter((l) => l.includes('"level":"error"') || l.includes('will retry'))).toEqual([]);
    await w.outbox.stop();
    await w.store.close();
  });
});

describe('a delivery claim', () => {
  /** This process's clock: read when the claim is granted, then a whole claim time later. */
  function lateClock() {
    let read = false;
    return () => {
      if (read) return DELIVERY.leaseMs;
      read = true;
      return 0;
    };
  }
  async function claimed(w: World) {
    await w.store.enqueue([post()], T0);
    const [item] = await w.store.claimOutbox(INSTANCE, T0, 1, DELIVERY.leaseMs);
    if (!item) throw new Error('nothing due');
    return item;
  }

  it('that no longer covers a call is renewed before the post', async () => {
    const w = open({ monotonic: lateClock() });
    await w.outbox.deliver(await claimed(w));
    expect(w.slack.postMessage).toHaveBeenCalledOnce();
    expect(w.row(1)).toMatchObject({ deliveredAt: T0, claimedBy: null });
  });

  it('lost while Slack refused the post: no rescue is sent, and nothing is given up or logged as failed', async () => {
    const clock = { at: 0 };
    const w = open({ monotonic: () => clock.at });
    const item = await claimed(w);
    w.slack.postMessage.mockImplementationOnce(async () => {
      // The refusal comes a claim time later, and another instance has taken the item by then.
      clock.at += DELIVERY.leaseMs;
      w.store.db.prepare("UPDATE outbox SET claimed_by = 'instance-outbox-2' WHERE id = ?").run(item.id);
      throw slackError('msg_too_long');
    });
    await w.outbox.deliver(item);
    expect(w.slack.postMessage).toHaveBeenCalledOnce();
    expect(w.givenUp).not.toHaveBeenCalled();
    expect(w.logs.filter((l) => l.includes('"level":"error"') || l.includes('will retry'))).toEqual([]);
    expect(w.row(item.id)).toMatchObject({ deliveredAt: null, deadAt: null, claimedBy: 'instance-outbox-2' });
  });

  it('another instance took over meanwhile: nothing is posted, and the item is left to it', async () => {
    const w = open({ monotonic: lateClock() });
    const item = await claimed(w);
    w.store.db.prepare("UPDATE outbox SET claimed_by = 'instance-outbox-2' WHERE id = ?").run(item.id);
    await w.outbox.deliver(item);
    expect(w.slack.postMessage).not.toHaveBeenCalled();
    expect(w.row(item.id)).toMatchObject({ deliveredAt: null, deadAt: null, claimedBy: 'instance-outbox-2' });
    expect(w.logs.filter((l) => l.includes('"outboxId":1'))).toEqual([
      expect.stringContaining('another instance took this delivery over; not posting'),
    ]);
  });
});

describe('direct messages', () => {
  it('opens the requester’s direct conversation and posts there', async () => {
    const w = open();
    w.slack.openDirect = vi.fn(async () => 'D0ALICE') as never;
    const direct = {
      type: 'direct' as const,
      user: 'U0ALICE',
      text: 'Your job is done',
      eventType: 'docs_agent_dm',
    };
    expect(await w.attempt({ jobId: null, dedupeKey: 'dm1', payload: direct })).toMatchObject({
      deliveredAt: T0,
    });
    expect(w.slack.openDirect).toHaveBeenCalledExactlyOnceWith('U0ALICE');
    expect(w.slack.postMessage).toHaveBeenCalledExactlyOnceWith(
      expect.objectContaining({ channel: 'D0ALICE', text: 'Your job is done' }),
    );
  });
});

describe('the delivery loop', () => {
  /** A gate that counts the loop's rounds (each waits for it first). */
  const rounds = () => {
    let n = 0;
    const gate = {
      clear: async () => {
        n++;
      },
    } as unknown as YieldGate;
    return { gate, count: () => n };
  };
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('delivers every due item, a batch at a time without sleeping between full ones, and logs no crash', async () => {
    const w = open({ idleMs: 60_000 });
    for (let i = 0; i < 7; i++) await w.store.enqueue([{ ...post(), dedupeKey: `k${i}`, jobId: null }], T0);
    w.outbox.start();
    await waitFor('all delivered', () => w.slack.postMessage.mock.calls.length === 7);
    await w.outbox.stop();
    expect(w.logs.filter((l) => l.includes('delivery crashed'))).toEqual([]);
  });

  it('claims what it delivers for the claim time, so no other instance sends it meanwhile', async () => {
    const w = open();
    let release = () => {};
    w.slack.postMessage.mockImplementationOnce(
      () =>
        new Promise<string>((resolve) => {
          release = () => resolve('1.1');
        }),
    );
    await w.store.enqueue([post()], T0);
    w.outbox.start();
    await waitFor('the post in flight', () => w.slack.postMessage.mock.calls.length === 1);
    const claimed = w.row(1);
    release();
    // Held for one Slack call and a margin, by the store's clock (here the process's).
    expect(claimed).toMatchObject({ claimedBy: INSTANCE });
    expect(claimed.claimedUntil).toBe(T0 + DELIVERY.leaseMs);
    await waitFor('delivered', () => w.row(1).deliveredAt === T0);
    await w.outbox.stop();
  });

  it('logs a round that failed by the loop’s name, and delivers in the next', async () => {
    let failures = 1;
    const w = open({
      wrap: (store) =>
        new Proxy(store, {
          get: (target, key) =>
            key === 'claimOutbox'
              ? async (...args: Parameters<Store['claimOutbox']>) => {
                  if (failures-- > 0) throw new Error('database is locked');
                  return target.claimOutbox(...args);
                }
              : Reflect.get(target, key),
        }),
    });
    await w.store.enqueue([post()], T0);
    w.outbox.start();
    await waitFor('delivered', () => w.row(1).deliveredAt === T0);
    await w.outbox.stop();
    expect(w.logs.filter((l) => l.includes('step failed'))).toEqual([
      expect.stringMatching(/"msg":"outbox step failed".*database is locked/),
    ]);
  });

  it('logs a delivery that crashed, and goes on', async () => {
    // The write after the post fails, and so does the one recording the failure.
    let failures = 2;
    const w = open({
      wrap: (store) =>
        new Proxy(store, {
          get: (target, key) =>
            key === 'updateOutbox'
              ? async (...args: Parameters<Store['updateOutbox']>) => {
                  if (failures-- > 0) throw new Error('disk I/O error');
                  return target.updateOutbox(...args);
                }
              : Reflect.get(target, key),
        }),
    });
    await w.store.enqueue([post()], T0);
    w.outbox.start();
    await waitFor('the crash logged', () => w.logs.some((l) => l.includes('delivery crashed')));
    await w.outbox.stop();
    expect(w.logs.filter((l) => l.includes('delivery crashed'))).toEqual([
      expect.stringContaining('disk I/O error'),
    ]);
  });

  it('sleeps a second by default while nothing is queued', async () => {
    const { gate, count } = rounds();
    const w = open({ gate, idleMs: 'default' });
    w.outbox.start();
    await pause(300);
    await w.outbox.stop();
    expect(count()).toBe(1);
  });

  it('sleeps while nothing is queued, instead of spinning', async () => {
    const { gate, count } = rounds();
    const w = open({ gate, idleMs: 60_000 });
    w.outbox.start();
    await pause(300);
    await w.outbox.stop();
    expect(count()).toBe(1);
  });

  it('sleeps until the next item is due, at most its idle time', async () => {
    const { gate, count } = rounds();
    const w = open({ gate, idleMs: 60_000 });
    await w.store.enqueue([post()], T0);
    w.store.db.prepare('UPDATE outbox SET next_attempt_at = ?').run(T0 + 400);
    w.outbox.start();
    await pause(150);
    expect(count()).toBe(1);
    w.clock.at = T0 + 400;
    await waitFor('delivered once due', () => w.slack.postMessage.mock.calls.length === 1);
    await w.outbox.stop();
  });

  it('waits a little after an empty round even when an item is almost due', async () => {
    const { gate, count } = rounds();
    const w = open({ gate, idleMs: 60_000 });
    await w.store.enqueue([post()], T0);
    // Another instance holds it for one more millisecond; the clock here stands still.
    w.store.db.prepare('UPDATE outbox SET claimed_by = ?, claimed_until = ?').run('other', T0 + 1);
    w.outbox.start();
    await pause(300);
    await w.outbox.stop();
    expect(count()).toBeGreaterThanOrEqual(2);
    expect(count()).toBeLessThanOrEqual(8);
    expect(w.slack.postMessage).not.toHaveBeenCalled();
  });
});
