import { describe, expect, it } from 'vitest';
import { sleep, waitFor } from '../helpers/http.js';
import { postgresAvailable, TEST_DATABASE_URL } from '../helpers/postgres.js';
import { createCluster } from './cluster.js';

/** Commands given; about 60% also get a follow-up reply once their first answer is in. */
const COMMANDS = Number(process.env.CLUSTER_COMMANDS ?? 200);
/** People typing at once. */
const CONCURRENCY = 8;
const INSTANCES = 3;

const server = await postgresAvailable();
const t0 = Date.now();
const trace = (what: string) =>
  process.env.FAULT_TRACE && console.log(`cluster: ${what} +${Date.now() - t0}ms`);

describe('three instances on one PostgreSQL store, killed and restarted at random', () => {
  it('delivers every outcome exactly once, never polls a job from two instances at once, never doubles a job', async () => {
    // This suite exists to prove the PostgreSQL deployment; CI starts the server.
    expect(server, `the multi-instance suite needs PostgreSQL at ${TEST_DATABASE_URL}`).toEqual({ ok: true });
    // A GET takes 15 ms, so two instances polling one job at once would overlap and be seen.
    const cluster = await createCluster({ size: INSTANCES, agent: { latencyMs: 15 } });
    const details: string[] = [];
    let kills = 0;
    let graceful = 0;
    try {
      for (let slot = 0; slot < INSTANCES; slot++) await cluster.start(slot);

      // Chaos: every half second or so a serving instance is stopped (mostly SIGKILL, sometimes
      // SIGTERM) and restarted, never the last one serving.
      let loadDone = false;
      const cycling = new Set<number>();
      const cycle = async (slot: number) => {
        // Every fourth stop is a clean one (SIGTERM), the rest SIGKILL.
        const term = (kills + graceful) % 4 === 3;
        const stopping = cluster.inSlot(slot);
        const code = await cluster.stop(slot, term);
        if (term) {
          graceful += 1;
          if (code !== 0) {
            const said = (stopping?.output() ?? '').split('"msg":"signal received"')[1] ?? '';
            details.push(
              `instance in slot ${slot} exited ${code} on SIGTERM; after the signal it said:${said}`,
            );
          }
        } else if (stopping?.child.signalCode === 'SIGKILL') kills += 1;
        else details.push(`instance in slot ${slot} was not killed (exit ${code})`);
        trace(`${term ? 'SIGTERM' : 'SIGKILL'} slot ${slot}`);
        await sleep(100 + Math.random() * 300);
        await cluster.start(slot);
        cycling.delete(slot);
      };
      const restarts: Promise<void>[] = [];
      const chaos = (async () => {
        while (!loadDone) {
          await sleep(300 + Math.random() * 400);
          const slot = Math.floor(Math.random() * INSTANCES);
          if (loadDone || cycling.has(slot) || cycling.size >= INSTANCES - 1) continue;
          cycling.add(slot);
          restarts.push(cycle(slot));
        }
        await Promise.all(restarts);
      })();

      let next = 0;
      const person = async () => {
        while (next < COMMANDS) {
          const n = ++next;
          if (n % 20 === 0) trace(`command ${n}`);
          const first = `Document area #${n}# first`;
          // People pause between commands, so the load spans many kills.
          await sleep(Math.random() * 800);
          const ins = await cluster.command(first);
          if (!ins.acked || Math.random() >= 0.6) continue;
          // A person replies once the job has answered in its thread (not when told privately
          // that it did not start).
          const toldPrivately = () =>
            cluster.slack.responses.some((r) => r.path === `/respond/${ins.responseId}`);
          const answered = await waitFor(
            'first answer',
            () => {
              if (toldPrivately()) return 'told';
              const root = cluster.rootOf(first);
              return root && cluster.slack.threadPosts(root.ts).length > 0 ? root : undefined;
            },
            20_000,
          ).catch(() => undefined);
          if (answered && answered !== 'told') await cluster.reply(answered.ts, `Refine area #${n}# further`);
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, person));
      loadDone = true;
      await chaos;
      trace('load done');

      await waitFor('every instance serving', () => cluster.live().length === INSTANCES, 20_000);
      await waitFor('the store settled', () => cluster.settled(), 60_000);
      trace('settled');
      // Settled in the store also means every post was accepted by Slack; give stragglers a moment.
      await sleep(300);
      for (let slot = 0; slot < INSTANCES; slot++) expect(await cluster.stop(slot, true)).toBe(0);

      const scenario = `${INSTANCES} instances, ${kills} SIGKILL, ${graceful} SIGTERM`;
      cluster.tally('Several instances on PostgreSQL', scenario, details, COMMANDS);
      expect(kills).toBeGreaterThanOrEqual(8);
      expect(graceful).toBeGreaterThanOrEqual(2);
      expect(cluster.agent.overlappingGets, 'the same job polled by two instances at once').toEqual([]);
      expect(cluster.agent.violations).toEqual([]);
      // No command, acknowledged or not, made two jobs.
      const firstPrompts = [...cluster.agent.jobs.values()].map((j) => j.prompts[0]);
      expect(firstPrompts.length - new Set(firstPrompts).size).toBe(0);
      // The work really was shared: more than one process finished runs.
      const finishers = cluster.processes.filter((p) => p.output().includes('"msg":"run finished"'));
      expect(finishers.length).toBeGreaterThan(1);
    } finally {
      await cluster.close();
    }
  }, 240_000);
});
