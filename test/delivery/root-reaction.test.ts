import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createReactionSync } from '../../src/delivery/root-reaction.js';
import { type DeliveryWorld, deliveryWorld } from '../helpers/delivery-world.js';

const ROOT = '1700000000.000100';

let w: DeliveryWorld;
beforeAll(async () => {
  w = await deliveryWorld();
});
beforeEach(() => w.reset());
afterAll(() => w.close());

async function open() {
  const sync = createReactionSync({ store: w.store, slack: w.gateway, logger: w.logger });
  /** The emoji the store says the root carries. */
  const recorded = async (id: number) => (await w.store.getJob(id))?.rootReaction;
  return {
    slack: w.slack,
    store: w.store,
    clock: w.clock,
    job: w.job,
    logged: w.logged,
    sync,
    recorded,
    onRoot: () => w.slack.reactionsOn('C0DOCS', ROOT),
  };
}

describe('the status emoji on a job thread’s root', () => {
  it('is put on the root while the agent works, and recorded', async () => {
    const w = await open();
    const job = await w.job({ phase: 'active', threadTs: ROOT, cardTs: ROOT });
    await w.sync(job);
    expect(w.onRoot()).toEqual(['hourglass_flowing_sand']);
    expect(await w.recorded(job.id)).toBe('hourglass_flowing_sand');
  });

  it('is swapped for the outcome’s: the old one taken off first', async () => {
    const w = await open();
    const active = await w.job({ phase: 'active', threadTs: ROOT, cardTs: ROOT });
    await w.sync(active);
    await w.store.apply({ jobId: active.id, job: { phase: 'idle', lastOutcome: 'failed' } }, w.clock.at);
    await w.sync((await w.store.getJob(active.id)) ?? active);
    expect(w.slack.calls.map((c) => [c.method, c.args.name])).toEqual([
      ['reactions.add', 'hourglass_flowing_sand'],
      ['reactions.remove', 'hourglass_flowing_sand'],
      ['reactions.add', 'x'],
    ]);
    expect(w.onRoot()).toEqual(['x']);
    expect(await w.recorded(active.id)).toBe('x');
  });

  it('costs no Slack call when the root already shows the job’s state', async () => {
    const w = await open();
    const job = await w.job({
      phase: 'idle',
      lastOutcome: 'completed_pr',
      threadTs: ROOT,
      rootReaction: 'white_check_mark',
    });
    await w.sync(job);
    expect(w.slack.calls).toEqual([]);
  });

  it('is left alone while the job has no thread', async () => {
    const w = await open();
    const job = await w.job({ phase: 'active', threadTs: null });
    await w.sync(job);
    expect(w.slack.calls).toEqual([]);
    expect(await w.recorded(job.id)).toBeNull();
  });

  it('is taken off, and none put on, once a new job took the thread over', async () => {
    const w = await open();
    const job = await w.job({ phase: 'retried', threadTs: ROOT, rootReaction: 'x' });
    w.slack.reactions.set(`C0DOCS:${ROOT}`, new Set(['x']));
    await w.sync(job);
    expect(w.slack.callsTo('reactions.add')).toEqual([]);
    expect(w.onRoot()).toEqual([]);
    expect(await w.recorded(job.id)).toBeNull();
  });

  it('goes on when someone already took the old emoji off', async () => {
    const w = await open();
    const job = await w.job({
      phase: 'idle',
      lastOutcome: 'archived',
      threadTs: ROOT,
      rootReaction: 'hourglass_flowing_sand',
    });
    await w.sync(job);
    expect(w.onRoot()).toEqual(['file_cabinet']);
    expect(await w.recorded(job.id)).toBe('file_cabinet');
  });

  it('never fails the card update when Slack refuses it; unrecorded, so the next update tries again', async () => {
    const w = await open();
    const job = await w.job({ phase: 'active', threadTs: ROOT });
    w.slack.fail('reactions.add', { error: 'ratelimited' });
    await expect(w.sync(job)).resolves.toBeUndefined();
    expect(await w.recorded(job.id)).toBeNull();
    expect(w.logged('could not update the status emoji')).toHaveLength(1);

    w.slack.fail('reactions.add', { error: 'invalid_auth' });
    await expect(w.sync(job)).resolves.toBeUndefined();
    expect(await w.recorded(job.id)).toBeNull();

    await w.sync(job);
    expect(w.onRoot()).toEqual(['hourglass_flowing_sand']);
    expect(await w.recorded(job.id)).toBe('hourglass_flowing_sand');
  });
});
