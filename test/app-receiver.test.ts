import { afterEach, describe, expect, it, vi } from 'vitest';
import { TEAM } from './helpers/fake-network.js';
import { HELPER } from './helpers/job-world.js';
import { createListenerWorld, type ListenerWorld } from './helpers/listener-deps.js';

// The receiver itself, built on a real foundation, is tried in app-build.test.ts.
describe('listenerDeps: what every listener is given', () => {
  let w: ListenerWorld;
  afterEach(() => w.stop().catch(() => undefined));

  it('counts a follow-up the store could not record as not recorded, once, and passes the error on', async () => {
    w = createListenerWorld();
    const { job } = await w.activeJob();
    await w.store.close();
    const reply = {
      teamId: TEAM,
      channelId: job.channelId,
      threadTs: job.threadTs ?? '',
      messageTs: '1700000600.000600',
      userId: HELPER,
      text: 'Also cover the CLI',
    };
    await expect(w.deps.jobs.acceptReply(reply)).rejects.toThrow();
    expect(w.deps.metrics.instruction).toHaveBeenCalledTimes(1);
    expect(w.deps.metrics.instruction).toHaveBeenCalledWith('reply', 'not_recorded');
  });

  it('wakes the outbox after what a listener queues is written', async () => {
    w = createListenerWorld();
    const { job } = await w.activeJob();
    const kick = vi.mocked(w.loops.outbox.kick);
    kick.mockClear();
    await w.deps.outbox.applyQueued({ jobId: job.id, job: { phase: 'idle' } }, Date.now());
    expect(kick).toHaveBeenCalledTimes(1);
    expect((await w.job(job.id)).phase).toBe('idle');
  });

  it('says Socket Mode exactly when an app token is configured', () => {
    w = createListenerWorld();
    expect(w.deps.socketMode).toBe(false);
    void w.stop();
    w = createListenerWorld({}, { socketMode: true });
    expect(w.deps.socketMode).toBe(true);
  });
});
