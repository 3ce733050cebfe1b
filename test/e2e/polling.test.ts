import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';

let h: Harness;
afterEach(async () => {
  await h.stop();
});

describe('polling faults', () => {
  it('says the status is unknown when it stops watching a job it could not check', async () => {
    h = await startHarness({ POLL_MAX_AGE_MS: '1000', POLL_MAX_INTERVAL_MS: '100' });
    const { threadTs } = await h.startJob();
    h.agent.fail('get', ...Array.from({ length: 200 }, () => ({ status: 502 })));
    const post = await waitFor('stopped watching', () => h.slack.threadPosts(threadTs)[0], 8_000);
    expect(post.text).toContain('Its status is unknown');
  });

  it.each([
    [500, {}],
    [429, { 'retry-after': '0' }],
  ])('keeps watching through %i answers on get, then delivers the outcome', async (status, headers) => {
    h = await startHarness();
    const { threadTs, jobId } = await h.startJob();
    h.agent.fail('get', ...Array.from({ length: 6 }, () => ({ status, headers })));
    h.agent.complete(jobId, 'https://github.com/example/docs/pull/9');
    const post = await waitFor('outcome', () => h.slack.threadPosts(threadTs)[0], 10_000);
    expect(post.text).toContain('pull/9');
    expect(h.agent.requestsFor('get').length).toBeGreaterThanOrEqual(7);
  });

  it('backs off on 401 instead of retrying in a loop, and logs it loudly', async () => {
    h = await startHarness({ POLL_INTERVAL_MS: '50', POLL_MAX_INTERVAL_MS: '400' });
    const { jobId } = await h.startJob();
    h.agent.fail('get', ...Array.from({ length: 50 }, () => ({ status: 401 })));
    const before = h.agent.requestsFor('get').length;
    // Five refused polls, then the gaps between them: each waits twice as long as the one
    // before, up to the 400 ms cap, shortened by at most a fifth (jitter). A loop at the 50 ms
    // interval would make every gap about 50 ms.
    const refused = await waitFor('five refused polls', () => {
      const gets = h.agent.requestsFor('get').slice(before);
      return gets.length >= 5 ? gets.slice(0, 5) : undefined;
    });
    const gaps = refused.slice(1).map((r, i) => r.at - (refused[i]?.at ?? 0));
    const backoff = [100, 200, 400, 400];
    gaps.forEach((gap, i) => {
      expect(gap).toBeGreaterThanOrEqual(0.8 * (backoff[i] ?? 0));
    });
    expect(h.logs.some((l) => l.includes('"level":"error"') && l.includes('refused the admin key'))).toBe(
      true,
    );
    expect(h.agent.jobs.get(jobId)?.status).toBe('active');
    // The thread hears about it once (after the third refusal), however many follow.
    await h.settled();
    expect(h.slack.messages.filter((m) => m.text.includes('refuses this bot'))).toHaveLength(1);
  });

  it('stops watching a job that stays active beyond the maximum age', async () => {
    h = await startHarness({ POLL_MAX_AGE_MS: '1000' });
    const { threadTs, jobId } = await h.startJob();
    const post = await waitFor('stopped watching', () => h.slack.threadPosts(threadTs)[0], 5_000);
    expect(post.text).toContain('stopped watching');
    expect(post.text).toContain('still running after 1 second');
    const getsOf = (id: string) => h.agent.requestsFor('get').filter((r) => r.jobId === id).length;
    const gets = getsOf(jobId);
    // Control: a job started after it is polled again and again, the first one no more.
    const other = await h.startJob({ text: 'Document the next thing' });
    await waitFor('the next job polled twice', () => getsOf(other.jobId) >= 2);
    expect(getsOf(jobId)).toBe(gets);
  });

  it('spreads polls of many jobs evenly within POLL_MAX_RPS', async () => {
    h = await startHarness({ POLL_INTERVAL_MS: '20', POLL_MAX_RPS: '5' });
    for (const text of ['Document one', 'Document two', 'Document three']) await h.startJob({ text });
    const before = h.agent.requestsFor('get').length;
    // Three jobs due every 20 ms would want 150 polls a second; the budget allows 5, spaced.
    const gets = await waitFor('eight more polls', () => {
      const later = h.agent.requestsFor('get').slice(before);
      return later.length >= 8 ? later.slice(0, 8) : undefined;
    });
    const gaps = gets.slice(1).map((r, i) => r.at - (gets[i]?.at ?? 0));
    // Spaced, not bursting (a timer that fired late may shorten the next gap a little), and no
    // faster than the budget over the whole run.
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(150);
    expect((gets.at(-1)?.at ?? 0) - (gets[0]?.at ?? 0)).toBeGreaterThanOrEqual(7 * 190);
    // Every job gets its turn.
    expect(new Set(gets.map((r) => r.jobId)).size).toBe(3);
  });

  it('polls a young run at the configured interval', async () => {
    h = await startHarness({ POLL_INTERVAL_MS: '100', POLL_MAX_INTERVAL_MS: '5000' });
    await h.startJob();
    const before = h.agent.requestsFor('get').length;
    const polls = await waitFor('fifteen more polls', () => {
      const later = h.agent.requestsFor('get').slice(before);
      return later.length >= 15 ? later.slice(0, 15) : undefined;
    });
    const gaps = polls.slice(1).map((r, i) => r.at - (polls[i]?.at ?? 0));
    // Each interval is 100 ms shortened by up to a fifth, never below 80 ms; an interval growing
    // by even a quarter per poll would make the last of these gaps over a second.
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(80);
    expect(gaps.at(-1)).toBeLessThan(400);
    expect((polls.at(-1)?.at ?? 0) - (polls[0]?.at ?? 0)).toBeLessThan(14 * 100 + 600);
  });
});
