import { WebClient } from '@slack/web-api';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { createOutbox, type Outbox, type OutboxOptions } from '../../src/delivery/outbox.js';
import type { SendDeps } from '../../src/delivery/outbox-kind.js';
import { leasesFor } from '../../src/jobs/job-context.js';
import { createLogger, type Logger, type Redact } from '../../src/logging/logger.js';
import { createSlackCaller } from '../../src/slack/caller.js';
import { createSlackGateway, type SlackGateway } from '../../src/slack/gateway.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type {
  JobPatch,
  JobRecord,
  NewJob,
  NewOutboxItem,
  OutboxItem,
  StoredPayload,
} from '../../src/store/types.js';
import { insertSampleJob } from './job-record.js';
import { T0 } from './job-world.js';
import { HINTS } from './rendering.js';
import { BOT_TOKEN, type SlackStandIn, startSlackStandIn } from './slack-stand-in.js';

export interface GatewayOnStandIn {
  slack: SlackStandIn;
  gateway: SlackGateway;
}

/**
 * The real Slack gateway on a real Web API client, talking to a fresh Slack stand-in; the
 * caller closes `slack`. Retries are off, so a refused call is seen at once.
 */
export async function gatewayOnStandIn(
  options: {
    ownBotId?: () => string;
    /** What the caller masks on the way out; nothing by default. */
    redact?: Redact;
  } = {},
): Promise<GatewayOnStandIn> {
  const slack = await startSlackStandIn();
  const client = new WebClient(BOT_TOKEN, { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 } });
  // What the caller logs of a refused call is not read here: the tests read Slack's side.
  const logger = createLogger({ level: 'error', secrets: [BOT_TOKEN], write: () => {} });
  const caller = createSlackCaller({ client, logger, redact: options.redact ?? ((text) => text) });
  const gateway = createSlackGateway({
    caller,
    ...(options.ownBotId ? { ownBotId: options.ownBotId } : {}),
  });
  return { slack, gateway };
}

/**
 * The outbox's parts one at a time: the real gateway on a Slack stand-in, a store in memory on a
 * clock the test moves (`clock`), and a logger whose lines the test reads.
 */
async function deliveryWorld() {
  const { slack, gateway } = await gatewayOnStandIn();
  const clock = { at: T0 };
  let store = openSqliteStore(':memory:', { now: () => clock.at });
  const logs: string[] = [];
  const logger: Logger = createLogger({ level: 'debug', secrets: [BOT_TOKEN], write: (l) => logs.push(l) });

  /**
   * A job in channel C0DOCS asked by U0ALICE (a command's unless `fields` say otherwise), then
   * changed by `patch` (phase, thread…).
   */
  async function job(patch: JobPatch = {}, fields: Partial<NewJob> = {}): Promise<JobRecord> {
    const { job } = await insertSampleJob(store, clock.at, {
      instruction: 'Document the retry settings',
      ...fields,
    });
    if (Object.keys(patch).length > 0) await store.apply({ jobId: job.id, job: patch }, clock.at);
    const stored = await store.getJob(job.id);
    if (!stored) throw new Error('job not stored');
    return stored;
  }

  /**
   * Queues `item` and claims it back, as the outbox's round does: counted as its first attempt.
   * Its payload comes back as it was written (the store keeps it as JSON).
   */
  async function claimed<P extends StoredPayload>(item: NewOutboxItem<P>): Promise<OutboxItem<P>> {
    await store.enqueue([item], clock.at);
    const [got] = await store.claimOutbox('i-test', clock.at, 1, 10_000);
    if (!got) throw new Error('nothing due');
    return got as OutboxItem<P>;
  }

  /** What the kinds' sending is built from, on this world (no sessions, App Home or steps). */
  const sendDeps = (more: Partial<SendDeps> = {}): SendDeps => ({
    store,
    instanceId: 'i-test',
    slack: gateway,
    logger,
    hints: HINTS,
    now: () => clock.at,
    ...more,
  });

  return {
    slack,
    gateway,
    /**
     * The real outbox delivering through this world's gateway from `store` (one on the real clock,
     * for an outbox that runs), as one instance with a lease worked out from a 6 s agent time-out;
     * not started.
     */
    outboxOn(store: OutboxOptions['store']): Outbox {
      return createOutbox({
        store,
        instanceId: 'i-test',
        lease: leasesFor(6_000).delivery,
        slack: gateway,
        logger,
        hints: HINTS,
      });
    },
    get store() {
      return store;
    },
    logger,
    logs,
    clock,
    job,
    claimed,
    sendDeps,
    /** Log lines that contain `text`. */
    logged: (text: string) => logs.filter((l) => l.includes(text)),
    /**
     * What every test must leave behind: no queued fault left unserved, no call Slack would have
     * refused (Block Kit, arguments) and no call to a method the stand-in does not know.
     */
    check() {
      expect(slack.pendingFaults(), 'faults queued but never served').toBe(0);
      expect(slack.invalid, 'calls Slack would refuse').toEqual([]);
      expect(slack.unexpected, 'calls to methods Slack does not have').toEqual([]);
    },
    /** A fresh store, the clock back at T0, and nothing recorded or set in the stand-in or the logger. */
    async reset() {
      await store.close();
      clock.at = T0;
      store = openSqliteStore(':memory:', { now: () => clock.at });
      logs.length = 0;
      slack.reset();
    },
    async close() {
      await store.close();
      await slack.close();
    },
  };
}

export type DeliveryWorld = Awaited<ReturnType<typeof deliveryWorld>>;

/**
 * One delivery world for the test file: built before its tests, reset before each, checked after
 * each (so a stray fault or a refused block is blamed on its own test) and closed after all. The
 * returned object always stands for that world; a file's own `beforeEach` runs after the reset.
 */
export function useDeliveryWorld(): DeliveryWorld {
  let current: DeliveryWorld | undefined;
  beforeAll(async () => {
    current = await deliveryWorld();
  });
  beforeEach(() => current?.reset());
  afterEach(() => current?.check());
  afterAll(() => current?.close());
  return new Proxy({} as DeliveryWorld, {
    get(_target, key) {
      if (!current) throw new Error('no delivery world outside the tests of a file');
      return Reflect.get(current, key, current);
    },
  });
}
