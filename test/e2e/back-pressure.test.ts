import { describe, expect, it } from 'vitest';
import { useHarness } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';

// One background slot and one queued task: a burst overflows at once. Heartbeats every 200 ms,
// so work left to the store is taken over quickly.
const h = useHarness({ INSTANCE_TIMEOUT_MS: '600' }, { tasks: { concurrency: 1, maxQueued: 1 } });

const logged = (msg: string) => h.logs.filter((l) => (JSON.parse(l) as { msg: string }).msg.startsWith(msg));

describe('a burst beyond the background bounds', () => {
  it('acknowledges every command at once and starts every job exactly once, none lost', async () => {
    const burst = 8;
    // A slow agent keeps the only slot busy, so most of the burst finds no room.
    h.agent.fail('create', ...Array.from({ length: burst }, () => ({ delayMs: 150 })));
    for (let i = 0; i < burst; i++) {
      const started = Date.now();
      const res = await h.command({ text: `Burst instruction ${i}`, user_id: `U0P${i}` });
      expect(res.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(1_000);
    }
    expect(logged('background work is full').length).toBeGreaterThan(0);
    expect(logged('no room for background work: left to the store').length).toBeGreaterThan(0);

    await waitFor('every job created', () => h.agent.requestsFor('create').length === burst, 15_000);
    const prompts = h.agent
      .requestsFor('create')
      .map((r) => String(r.body?.prompt))
      .sort();
    expect(prompts).toEqual(Array.from({ length: burst }, (_, i) => `Burst instruction ${i}`).sort());
    await waitFor(
      'every job active',
      async () =>
        (await h.app.store.recentJobs({ channelId: 'C0GENERAL' }, 50)).every((j) => j.phase === 'active'),
      5_000,
    );
    const jobs = await h.app.store.recentJobs({ channelId: 'C0GENERAL' }, 50);
    expect(jobs).toHaveLength(burst);
    // One status card per job, no duplicate.
    expect(h.slack.messages.filter((m) => !m.thread_ts && m.text.includes('Burst instruction'))).toHaveLength(
      burst,
    );
  });

  it('forwards every reply of a burst, none lost', async () => {
    const { threadTs, channel, jobId } = await h.startJob();
    const replies = 6;
    h.agent.fail('message', ...Array.from({ length: replies }, () => ({ delayMs: 150 })));
    for (let i = 0; i < replies; i++) {
      const res = await h.event({ channel, thread_ts: threadTs, user: 'U0BOB', text: `Reply number ${i}` });
      expect(res.status).toBe(200);
    }
    expect(logged('no room for background work: left to the store').length).toBeGreaterThan(0);
    await waitFor(
      'every reply sent',
      () => {
        const sent = h.agent.requestsFor('message').map((r) => String(r.body?.prompt));
        return Array.from({ length: replies }, (_, i) => `Reply number ${i}`).every((t) =>
          sent.some((p) => p.includes(t)),
        );
      },
      15_000,
    );
    // Each reply went to the agent once (alone or batched with others).
    const sent = h.agent.requestsFor('message').flatMap((r) => String(r.body?.prompt).split('\n\n'));
    expect(sent.sort()).toEqual(Array.from({ length: replies }, (_, i) => `Reply number ${i}`).sort());
    expect(h.agent.requestsFor('message').every((r) => r.jobId === jobId)).toBe(true);
  });
});
