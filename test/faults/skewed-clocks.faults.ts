import { describe, expect, it } from 'vitest';
import { sleep, waitFor } from '../helpers/http.js';
import { postgresAvailable, TEST_DATABASE_URL } from '../helpers/postgres.js';
import { type Cluster, createCluster } from './cluster.js';

/**
 * Several instances on one PostgreSQL store whose hosts' clocks disagree, as when a time service
 * fails or a VM resumes with a stale clock: each instance's clock really is off (it runs under
 * libfaketime), while instances are killed, restarted and frozen (SIGSTOP). Ownership is decided
 * by the database's clock, so nothing may be lost or doubled.
 */

const INSTANCES = 3;
/** `INSTANCE_TIMEOUT_MS` of these runs (the cluster's default). */
const TIMEOUT_MS = 1_500;
const COMMANDS = Number(process.env.SKEW_COMMANDS ?? 36);
const CONCURRENCY = 6;

const server = await postgresAvailable();

/** The clock warnings an instance logged: its measured offset from the database's clock. */
function measuredOffsets(output: string): number[] {
  return output
    .split('\n')
    .filter((line) => line.includes('clock is far from the database'))
    .map((line) => Number(JSON.parse(line).offsetMs));
}

interface Chaos {
  kills: number;
  freezes: number;
}

/**
 * People give commands and reply in their threads while instances are killed (SIGKILL) and
 * restarted, and, every few seconds, one is frozen for `freezeMs`; never the last one serving.
 */
async function runLoad(cluster: Cluster, freezeMs: number): Promise<Chaos> {
  const chaos: Chaos = { kills: 0, freezes: 0 };
  let done = false;
  const busy = new Set<number>();
  /** Every third disturbance, the second one first, freezes; the others kill and restart. */
  const disturb = async (slot: number, nth: number) => {
    const app = cluster.inSlot(slot);
    if (nth % 3 === 1 && app) {
      app.freeze();
      chaos.freezes += 1;
      await sleep(freezeMs);
      app.thaw();
    } else {
      await cluster.stop(slot, false);
      chaos.kills += 1;
      await sleep(100 + Math.random() * 300);
      await cluster.start(slot);
    }
    busy.delete(slot);
  };
  const disturbances: Promise<void>[] = [];
  const chaosLoop = (async () => {
    while (!done) {
      await sleep(600 + Math.random() * 600);
      const slot = Math.floor(Math.random() * INSTANCES);
      if (done || busy.has(slot) || busy.size >= INSTANCES - 1) continue;
      busy.add(slot);
      disturbances.push(disturb(slot, disturbances.length));
    }
    await Promise.all(disturbances);
  })();

  let next = 0;
  const person = async () => {
    while (next < COMMANDS) {
      const n = ++next;
      const first = `Document skewed area #${n}# first`;
      await sleep(Math.random() * 800);
      const ins = await cluster.command(first);
      if (!ins.acked || n % 2 === 0) continue;
      const answered = await waitFor(
        'first answer',
        () => {
          const root = cluster.rootOf(first);
          return root && cluster.slack.threadPosts(root.ts).length > 0 ? root : undefined;
        },
        20_000,
      ).catch(() => undefined);
      if (answered) await cluster.reply(answered.ts, `Refine skewed area #${n}# further`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, person));
  done = true;
  await chaosLoop;
  return chaos;
}

/** Lets the store settle, stops every instance cleanly and adds up what the stand-ins saw. */
async function settleAndAccount(cluster: Cluster, scenario: string, chaos: Chaos) {
  await waitFor('every instance serving', () => cluster.live().length === INSTANCES, 20_000);
  await waitFor('the store settled', () => cluster.settled(), 90_000);
  await sleep(300);
  const outputs = cluster.processes.map((p) => p.output());
  for (let slot = 0; slot < INSTANCES; slot++) expect(await cluster.stop(slot, true)).toBe(0);
  const row = `${scenario}, ${chaos.kills} SIGKILL, ${chaos.freezes} frozen`;
  cluster.tally('Several instances on PostgreSQL, clocks skewed', row, [], COMMANDS);
  expect(cluster.agent.violations).toEqual([]);
  // No command made two jobs, and no follow-up reached the agent twice.
  const prompts = [...cluster.agent.jobs.values()].flatMap((j) => j.prompts);
  expect(prompts.length - new Set(prompts).size).toBe(0);
  return outputs;
}

describe('several instances on one PostgreSQL store, their hosts’ clocks skewed', () => {
  for (const factor of [0.5, 1.5]) {
    const skewMs = factor * TIMEOUT_MS;
    it(`loses and doubles nothing with clocks ${factor}× INSTANCE_TIMEOUT_MS ahead and behind, instances killed and frozen`, async () => {
      expect(server, `this suite needs PostgreSQL at ${TEST_DATABASE_URL}`).toEqual({ ok: true });
      // One host ahead, one behind, one right: each sees the others' heartbeats off by `skewMs`.
      const offsets = [skewMs, -skewMs, 0];
      // Slack answers as it does across the internet: posts take a while, so work is often in
      // the middle of one when another instance looks at it.
      const cluster = await createCluster({
        size: INSTANCES,
        agent: { latencyMs: 15 },
        slackLatencyMs: 150,
        clockOffsetsMs: offsets,
      });
      try {
        for (let slot = 0; slot < INSTANCES; slot++) await cluster.start(slot);
        const chaos = await runLoad(cluster, 3 * TIMEOUT_MS);
        await settleAndAccount(cluster, `clocks ±${factor}× INSTANCE_TIMEOUT_MS`, chaos);
        expect(chaos.kills).toBeGreaterThanOrEqual(2);
        expect(chaos.freezes).toBeGreaterThanOrEqual(1);
        // The skew was really there: every instance of a skewed slot measured it against the
        // database (its clock ahead shows as a negative offset), and the right one did not.
        const bySlot = cluster.processesBySlot();
        for (const [slot, apps] of bySlot) {
          const expected = -(offsets[slot] ?? 0);
          for (const app of apps) {
            const seen = measuredOffsets(app.output());
            if (expected === 0) expect(seen).toEqual([]);
            else expect(Math.abs((seen[0] ?? Number.NaN) - expected), app.output()).toBeLessThan(300);
          }
        }
      } finally {
        await cluster.close();
      }
    }, 240_000);
  }

  it('loses and doubles nothing while the agent API answers more slowly than an instance time-out, owners frozen mid-call', async () => {
    expect(server, `this suite needs PostgreSQL at ${TEST_DATABASE_URL}`).toEqual({ ok: true });
    // Creates and follow-ups take 2.5 s, longer than INSTANCE_TIMEOUT_MS: an owner frozen in the
    // middle of one stops heartbeating, and the others must still wait for its hold to run out.
    const slowMs = 2_500;
    const cluster = await createCluster({
      size: INSTANCES,
      agent: { latencyMs: 15 },
      clockOffsetsMs: [TIMEOUT_MS / 2, -TIMEOUT_MS / 2, 0],
      env: { DOCS_AGENT_API_TIMEOUT_MS: '4000' },
    });
    const slow = Array.from({ length: 4 * COMMANDS }, () => ({ delayMs: slowMs }));
    cluster.agent.fail('create', ...slow);
    cluster.agent.fail('message', ...slow);
    try {
      for (let slot = 0; slot < INSTANCES; slot++) await cluster.start(slot);
      const chaos = await runLoad(cluster, 2 * TIMEOUT_MS);
      await settleAndAccount(cluster, `agent API answering in ${slowMs / 1000} s`, chaos);
      expect(chaos.freezes).toBeGreaterThanOrEqual(1);
      // The calls really were slower than an instance time-out.
      expect(cluster.agent.requestsFor('create').length).toBeGreaterThanOrEqual(COMMANDS / 2);
    } finally {
      await cluster.close();
    }
  }, 240_000);
});
