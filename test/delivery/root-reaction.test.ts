import { describe, expect, it } from 'vitest';
import { createReactionSync } from '../../src/delivery/root-reaction.js';
import { useDeliveryWorld } from '../helpers/delivery-world.js';

const ROOT = '1700000000.000100';

const w = useDeliveryWorld();

/** The sync under test, and what it acts on. */
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
    const root = await open();
    const job = await root.job({ phase: 'active', threadTs: ROOT, cardTs: ROOT });
    await root.sync(job);
    expect(root.onRoot()).toEqual(['hourglass_flowing_sand']);
    expect(await root.recorded(job.id)).toBe('hourglass_flowing_sand');
  });

  it('is swapped for the outcome’s: the old one taken off first', async () => {
    const root = await open();
    const active = await root.job({ phase: 'active', threadTs: ROOT, cardTs: ROOT });
    await root.sync(active);
    await root.store.apply(
      { jobId: active.id, job: { phase: 'idle', lastOutcome: 'failed' } },
      root.clock.at,
    );
    await root.sync((await root.store.getJob(active.id)) ?? active);
    expect(root.slack.calls.map((c) => [c.method, c.args.name])).toEqual([
      ['reactions.add', 'hourglass_flowing_sand'],
      ['reactions.remove', 'hourglass_flowing_sand'],
      ['reactions.add', 'x'],
    ]);
    expect(root.onRoot()).toEqual(['x']);
    expect(await root.recorded(active.id)).toBe('x');
  });

  it('costs no Slack call when the root already shows the job’s state', async () => {
    const root = await open();
    const job = await root.job({
      phase: 'idle',
      lastOutcome: 'completed_pr',
      threadTs: ROOT,
      rootReaction: 'white_check_mark',
    });
    await root.sync(job);
    expect(root.slack.calls).toEqual([]);
  });

  it('is left alone while the job has no thread', async () => {
    const root = await open();
    const job = await root.job({ phase: 'active', threadTs: null });
    await root.sync(job);
    expect(root.slack.calls).toEqual([]);
    expect(await root.recorded(job.id)).toBeNull();
  });

  it('is taken off, and none put on, once a new job took the thread over', async () => {
    const root = await open();
    const job = await root.job({ phase: 'retried', threadTs: ROOT, rootReaction: 'x' });
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
      threadTs: ROOT,
      rootReaction: 'hourglass_flowing_sand',
    });
    await root.sync(job);
    expect(root.onRoot()).toEqual(['file_cabinet']);
    expect(await root.recorded(job.id)).toBe('file_cabinet');
  });

  it('never fails the card update when Slack refuses it; unrecorded, so the next update tries again', async () => {
    const root = await open();
    const job = await root.job({ phase: 'active', threadTs: ROOT });
    root.slack.fail('reactions.add', { error: 'ratelimited' });
    await expect(root.sync(job)).resolves.toBeUndefined();
    expect(await root.recorded(job.id)).toBeNull();
    expect(root.logged('could not update the status emoji')).toHaveLength(1);

    root.slack.fail('reactions.add', { error: 'invalid_auth' });
    await expect(root.sync(job)).resolves.toBeUndefined();
    expect(await root.recorded(job.id)).toBeNull();

    await root.sync(job);
    expect(root.onRoot()).toEqual(['hourglass_flowing_sand']);
    expect(await root.recorded(job.id)).toBe('hourglass_flowing_sand');
  });
});
