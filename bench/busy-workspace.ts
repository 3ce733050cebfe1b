import { tempDatabase, testEnv } from '../test/helpers/harness.js';
import { sleep } from '../test/helpers/http.js';
import { dropFreshSchema, freshSchemaUrl, postgresAvailable } from '../test/helpers/postgres.js';
import { SLACK_RATE_LIMITS } from '../test/helpers/slack-rate-limits.js';
import { type BusyLoad, busyLoad, FOLLOW_UP_AFTER_MS } from './busy-load.js';
import { allFinal, type BusyRun, busyReadings } from './busy-readings.js';
import { BUSY_CHANNEL_PROJECTS, type BusyWorld, busyWorld } from './busy-world.js';
import { type Child, startDocsAgent } from './processes.js';
import { preciseNow } from './stats.js';

export interface BusyWorkspaceOptions {
  /** Commands a minute, and for how many minutes. */
  perMinute: number;
  minutes: number;
  /** How long every answer of the Slack and agent API stand-ins takes, in milliseconds. */
  latencyMs: number;
  /** How long past the last job's scripted end the run waits for every thread to be final. */
  graceMs: number;
  /** The limited run and its unlimited baseline at the same time (else one after the other). */
  sideBySide: boolean;
}

/** The same load against Slack's rate limits and against no limits, on N instances. */
export interface BusyPair {
  limited: BusyRun;
  unlimited: BusyRun;
  sideBySide: boolean;
}

export interface BusyWorkspaceResult {
  /** The limits the limited runs were held to (`test/helpers/slack-rate-limits.ts`). */
  limits: typeof SLACK_RATE_LIMITS;
  one: BusyPair;
  /** Two instances on one PostgreSQL database; undefined when no server answered (`why`). */
  two: BusyPair | undefined;
  twoNotRun?: string;
}

/** The longest a run lasts upstream (`runLengthMs`), and how long a follow-up waits for its card. */
const LONGEST_RUN_MS = 90_000 + FOLLOW_UP_AFTER_MS + 5_000;
/** Everything posted and Slack not called for this long: nothing more will change. */
const QUIET_MS = 30_000;

/** Waits until every thread is final, or Slack has been quiet a while after every outcome, or the grace passes. */
async function settle(world: BusyWorld, load: BusyLoad, deadline: number): Promise<boolean> {
  const total = () =>
    Object.values(world.slack.rateLimitCounts() ?? {}).reduce((n, c) => n + c.accepted + c.refused, 0);
  let calls = total();
  let quietSince = preciseNow();
  for (;;) {
    if (allFinal(world, load)) return true;
    const now = preciseNow();
    if (now > deadline) return false;
    const seen = total();
    if (seen !== calls) [calls, quietSince] = [seen, now];
    const posted = [...world.agent.jobs.values()].every((j) => j.status !== 'active');
    if (posted && load.pendingFollowUps() === 0 && now - quietSince > QUIET_MS) return false;
    await sleep(1_000);
  }
}

/** docs-agent's settings in production (the tests' are quicker), on this run's store. */
function busyEnv(world: BusyWorld, databaseUrl: string | undefined) {
  return testEnv(world.slack, world.agent, tempDatabase(), {
    LOG_LEVEL: 'info',
    DOCS_AGENT_API_TIMEOUT_MS: '6000',
    POLL_INTERVAL_MS: '10000',
    POLL_MAX_INTERVAL_MS: '300000',
    POLL_MAX_RPS: '10',
    FOLLOW_UP_BATCH_MS: '3000',
    // 50 people sending a few hundred instructions: the per-person hourly limit is not measured.
    MAX_INSTRUCTIONS_PER_USER_PER_HOUR: '100000',
    CHANNEL_PROJECTS: BUSY_CHANNEL_PROJECTS,
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  });
}

/** One run: fresh stand-ins, store and instances, the load, then the wait for every thread. */
async function busyRun(options: BusyWorkspaceOptions, instances: number, limited: boolean): Promise<BusyRun> {
  let load: BusyLoad | undefined;
  const world = await busyWorld({
    latencyMs: options.latencyMs,
    limited,
    onCard: (k, card) => load?.cardPosted(k, card),
  });
  const databaseUrl = instances > 1 ? await freshSchemaUrl() : undefined;
  const apps: Child[] = [];
  try {
    // One after the other: the first migrates the new schema.
    for (let i = 0; i < instances; i++) apps.push(await startDocsAgent(busyEnv(world, databaseUrl)));
    load = busyLoad({
      bases: apps.map((a) => a.base),
      slack: world.slack,
      perMinute: options.perMinute,
      minutes: options.minutes,
    });
    world.startEnding();
    await load.run();
    const lastCommand = preciseNow();
    const complete = await settle(world, load, lastCommand + LONGEST_RUN_MS + options.graceMs);
    return busyReadings(world, load, {
      instances,
      limited,
      waitedMs: Math.round(preciseNow() - lastCommand),
      allFinal: complete,
    });
  } finally {
    await Promise.all(apps.map((a) => a.stop()));
    await world.close();
    if (databaseUrl) await dropFreshSchema(databaseUrl);
  }
}

async function pair(options: BusyWorkspaceOptions, instances: number): Promise<BusyPair> {
  if (options.sideBySide) {
    const [limited, unlimited] = await Promise.all([
      busyRun(options, instances, true),
      busyRun(options, instances, false),
    ]);
    return { limited, unlimited, sideBySide: true };
  }
  const limited = await busyRun(options, instances, true);
  return { limited, unlimited: await busyRun(options, instances, false), sideBySide: false };
}

/**
 * A busy workspace against Slack's rate limits: one docs-agent instance on SQLite, then two
 * sharing PostgreSQL, each under the same load with the limits enforced and without them.
 */
export async function busyWorkspace(options: BusyWorkspaceOptions): Promise<BusyWorkspaceResult> {
  const one = await pair(options, 1);
  const server = await postgresAvailable();
  if (!server.ok) return { limits: SLACK_RATE_LIMITS, one, two: undefined, twoNotRun: server.why };
  return { limits: SLACK_RATE_LIMITS, one, two: await pair(options, 2) };
}
