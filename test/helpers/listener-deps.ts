/**
 * What a listener is given, for unit tests that call it directly with Bolt's arguments (as the
 * Bolt starter template tests its listeners): the real job service, task tracker, App Home
 * publisher and health on a real SQLite store, with Slack and the agent API faked (see
 * job-world.ts). Bolt's own arguments are plain objects and vi.fn().
 */
import { vi } from 'vitest';
import { buildHome } from '../../src/app-build.js';
import { listenerDeps } from '../../src/app-receiver.js';
import { secretsOf } from '../../src/config/config.js';
import { createHealth } from '../../src/http/health.js';
import type { ListenerDeps } from '../../src/listeners/types.js';
import { createRedactor } from '../../src/logging/logger.js';
import { createTaskTracker } from '../../src/util/tasks.js';
import { TEAM } from './fake-network.js';
import { CHANNEL, createJobWorld, HELPER, REPLY_TS } from './job-world.js';
import { BOT_USER_ID } from './slack-stand-in.js';
import { APP_TOKEN } from './socket-mode-stand-in.js';

/** What `HELPER`'s reply says in {@link ListenerWorld.jobWithWaitingReply}. */
export const REPLY_TEXT = 'Also cover the SDK';

export function createListenerWorld(
  env: Record<string, string> = {},
  options: { socketMode?: boolean } = {},
) {
  const w = createJobWorld(env);
  // The installation middleware runs before every listener and notes the workspace.
  w.identity.noteInstallation(TEAM);
  const tracker = createTaskTracker(w.ctx.logger);
  /** Work the listener handed to the background, so a test can wait for all of it. */
  const started: Promise<unknown>[] = [];
  const tasks: ListenerDeps['tasks'] = {
    run: vi.fn((name: string, work: () => Promise<void>) =>
      tracker.run(name, () => {
        const running = work();
        started.push(running.catch(() => {}));
        return running;
      }),
    ),
    get hasRoom() {
      return tracker.hasRoom;
    },
    drain: (ms) => tracker.drain(ms),
    get size() {
      return tracker.size;
    },
  };
  const { logger, now } = w.ctx;
  const { store, slack, identity, hints, access } = w;
  const config = options.socketMode
    ? { ...w.config, slack: { ...w.config.slack, appToken: APP_TOKEN } }
    : w.config;
  const home = buildHome({ store, logger, hints, config, now }, { access, slack, identity });
  // Built as the app builds them; only the metrics and the step completer are Slack-free stand-ins.
  const deps = listenerDeps({
    access,
    store,
    slack,
    identity,
    hints,
    config,
    logger,
    home,
    tasks,
    jobs: w.service({ runTask: (name, work) => tasks.run(name, work) }),
    outbox: w.deps.loops.outbox,
    metrics: { feedback: vi.fn(), instruction: vi.fn() },
    health: createHealth(now),
    names: w.deps.names,
    redact: createRedactor(secretsOf(w.config)),
    steps: { remember: () => undefined },
  });
  const jobs = deps.jobs;
  return {
    ...w,
    deps,
    jobs,
    /** The outbox's and poller's wake-ups the job service and the listeners call. */
    loops: w.deps.loops,
    /** Waits for every piece of background work the listener started (and what that started). */
    async idle() {
      for (let i = 0; i < started.length; i++) await started[i];
    },
    /** Log lines at `level` or above whose message contains `text`. */
    logged(level: 'warn' | 'error', text: string) {
      return w.logs.filter(
        (l) => l.includes(text) && (level === 'warn' ? /"level":"(warn|error)"/ : /"level":"error"/).test(l),
      );
    },
    /**
     * An active job (in `channelId`) with `HELPER`'s reply in its thread (the message `replyTs`),
     * recorded through the job service and still waiting.
     */
    async jobWithWaitingReply(channelId = CHANNEL, replyTs = REPLY_TS) {
      const { job } = await w.activeJob({ channelId });
      const threadTs = job.threadTs ?? '';
      await jobs.acceptReply({
        teamId: TEAM,
        channelId,
        threadTs,
        messageTs: replyTs,
        userId: HELPER,
        text: REPLY_TEXT,
      });
      /** The reply's run, as the store has it now. */
      const reply = async () => (await w.runs(job.id)).find((r) => r.messageTs === replyTs);
      return {
        job,
        threadTs,
        reply,
        /** Marks the reply sent, as if the agent had it already. */
        async markSent() {
          const run = await reply();
          await w.store.apply(
            { jobId: job.id, run: { id: run?.id ?? 0, patch: { state: 'sent' } } },
            Date.now(),
          );
          return run;
        },
      };
    },
    stop() {
      jobs.stop();
      return w.store.close();
    },
  };
}

export type ListenerWorld = ReturnType<typeof createListenerWorld>;

/** Bolt's `ack`, recording what the store held when it was called (acknowledged after recording?). */
export function ackSpy(world: ListenerWorld) {
  const jobsAtAck: number[] = [];
  const ack = vi.fn(async (_answer?: unknown) => {
    jobsAtAck.push(world.jobCount());
  });
  return { ack, jobsAtAck };
}

/** Bolt's logger and Web API client: the listeners use neither (they get theirs in deps). */
export const boltExtras = () => ({
  logger: { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() },
  client: {},
  next: vi.fn(async () => {}),
});

/** Bolt's arguments for an interaction: `fields` (the payload as Slack sent it, and `ack`) and what Bolt adds. */
export function boltArgs<Args>(fields: Record<string, unknown>): Args {
  return { respond: vi.fn(), say: vi.fn(), context: {}, ...boltExtras(), ...fields } as unknown as Args;
}

/** Bolt's arguments for a click in a message: a `block_actions` body, its first action as `action`. */
export function boltActionArgs<Args>(body: { actions: unknown[] }, ack: unknown): Args {
  return boltArgs<Args>({ body, payload: body.actions[0], action: body.actions[0], ack });
}

/**
 * Bolt's arguments for an Events API event delivered to the test workspace's bot: the event as
 * `event`, `payload` and `message`, its envelope, and the context Bolt's authorize gives.
 */
export function boltEventArgs<Args>(
  event: Record<string, unknown>,
  context: Record<string, unknown> = {},
): Args {
  const body = {
    team_id: TEAM,
    event,
    authorizations: [{ team_id: TEAM, user_id: BOT_USER_ID, is_bot: true }],
  };
  return {
    event,
    body,
    payload: event,
    message: event,
    context: { botUserId: BOT_USER_ID, teamId: TEAM, ...context },
    say: vi.fn(),
    ...boltExtras(),
  } as unknown as Args;
}
