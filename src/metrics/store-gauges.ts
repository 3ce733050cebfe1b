import { Gauge, type Registry } from 'prom-client';
import { HOUR_MS } from '../access/access-policy.js';
import { AGENT_HOURLY_LIMIT } from '../agent/schema.js';
import { projectOfRecord } from '../config/config.js';
import type { Logger } from '../logging/logger.js';
import type { StoreFigures } from '../store/types.js';
import { withTimeout } from '../util/loop.js';

/**
 * Longest a scrape waits for the store, in milliseconds: well inside Prometheus' default
 * 10-second scrape time-out, so a slow store shows as `docs_agent_store_read_ok 0` instead of a
 * failed scrape that hides the process figures too.
 */
export const FIGURES_TIMEOUT_MS = 2_000;

export interface StoreGaugesOptions {
  register: Registry;
  /**
   * Reads the figures: uses since `usesSince` (epoch ms), instances heard from within
   * `instanceTimeoutMs` (by the store's clock).
   */
  read: (usesSince: number, instanceTimeoutMs: number) => Promise<StoreFigures>;
  /** Whether several instances share the store (PostgreSQL); otherwise this is the only one. */
  shared: boolean;
  /** Every project the deployment serves, the default first: each gets a quota figure, 0 included. */
  projects: readonly string[];
  /** An instance not heard from for this long is not counted live, in milliseconds. */
  instanceTimeoutMs: number;
  logger: Logger;
  /** Longest a scrape waits for the store, in milliseconds. Default {@link FIGURES_TIMEOUT_MS}. */
  timeoutMs?: number;
  now?: () => number;
}

/**
 * The deployment-wide gauges, read from the shared store when Prometheus scrapes. Every gauge
 * of one scrape shares one read (its collect callbacks start together). When the read fails or
 * takes longer than {@link FIGURES_TIMEOUT_MS}, they show NaN, never a stale or made-up value,
 * and `docs_agent_store_read_ok` shows 0.
 */
export function registerStoreGauges(options: StoreGaugesOptions): void {
  const { register, logger } = options;
  const now = options.now ?? Date.now;
  const defaultProject = options.projects[0] ?? '';
  const timeoutMs = options.timeoutMs ?? FIGURES_TIMEOUT_MS;

  let pending: Promise<{ figures: StoreFigures; at: number } | undefined> | undefined;
  /** One read for every gauge collected in the same scrape. */
  const figures = () => {
    pending ??= (async () => {
      const at = now();
      try {
        const read = await withTimeout(options.read(at - HOUR_MS, options.instanceTimeoutMs), timeoutMs);
        if (read) return { figures: read, at };
        logger.warn('the store did not answer in time for a metrics scrape', { timeoutMs });
      } catch (error) {
        logger.warn('could not read the store for a metrics scrape', { error });
      }
      return undefined;
    })().finally(() => {
      pending = undefined;
    });
    return pending;
  };

  /** An unlabelled gauge whose value comes from the figures (NaN when they could not be read). */
  const fromFigures = (name: string, help: string, value: (read: StoreFigures, at: number) => number) =>
    new Gauge({
      name,
      help,
      registers: [register],
      async collect() {
        const read = await figures();
        this.set(read ? value(read.figures, read.at) : Number.NaN);
      },
    });

  new Gauge({
    name: 'docs_agent_store_read_ok',
    help: 'Whether this scrape could read the store in time (1) or not (0: the store figures show NaN).',
    registers: [register],
    async collect() {
      this.set((await figures()) ? 1 : 0);
    },
  });
  new Gauge({
    name: 'docs_agent_agent_quota_used',
    help: 'Agent API uses counted against the project’s hourly limit in the last hour (as /docs-agent status shows). From the store: take once across instances.',
    labelNames: ['project'],
    registers: [register],
    async collect() {
      const read = await figures();
      this.reset();
      const used = new Map(options.projects.map((p) => [p, 0]));
      for (const u of read?.figures.uses ?? []) {
        const project = projectOfRecord(u.projectId, defaultProject);
        used.set(project, (used.get(project) ?? 0) + u.count);
      }
      for (const [project, count] of used) this.set({ project }, read ? count : Number.NaN);
    },
  });
  new Gauge({
    name: 'docs_agent_agent_quota_limit',
    help: 'The agent API’s limit of uses per project per hour.',
    registers: [register],
  }).set(AGENT_HOURLY_LIMIT);
  fromFigures(
    'docs_agent_poll_lag_seconds',
    'How overdue the most overdue active run’s poll is, in seconds (0 when none is). From the store: take once across instances.',
    (read, at) => (read.earliestPollAt === null ? 0 : Math.max(0, at - read.earliestPollAt) / 1000),
  );
  fromFigures(
    'docs_agent_active_runs',
    'Jobs whose latest run the agent is working on (polled until it ends). From the store: take once across instances.',
    (read) => read.activeJobs,
  );
  fromFigures(
    'docs_agent_outbox_backlog',
    'Messages waiting to be delivered to Slack (not yet delivered nor given up). From the store: take once across instances.',
    (read) => read.outboxBacklog,
  );
  fromFigures(
    'docs_agent_outbox_oldest_age_seconds',
    'Age of the oldest message waiting to be delivered to Slack, in seconds (0 when none waits). From the store: take once across instances.',
    (read, at) => (read.oldestUndeliveredAt === null ? 0 : Math.max(0, at - read.oldestUndeliveredAt) / 1000),
  );
  fromFigures(
    'docs_agent_instances',
    'Instances heartbeating into the store (always 1 on SQLite). From the store: take once across instances.',
    (read) => (options.shared ? Math.max(1, read.liveInstances) : 1),
  );
}
