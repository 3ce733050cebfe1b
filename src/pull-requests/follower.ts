import type { RenderHints } from '../blocks/messages.js';
import { pullRequestEndedText } from '../blocks/pull-requests.js';
import type { Lease } from '../cluster/membership.js';
import { cardUpdate } from '../delivery/kinds/card-update.js';
import { threadPost } from '../delivery/kinds/thread-post.js';
import { keys } from '../delivery/outbox-registry.js';
import type { Wakeable } from '../jobs/job-context.js';
import type { MetricsHooks } from '../jobs/metrics-hooks.js';
import type { Logger } from '../logging/logger.js';
import type {
  JobsStore,
  NewOutboxItem,
  NewPullRequest,
  PullRequestPatch,
  PullRequestRecord,
  PullRequestsStore,
} from '../store/types.js';
import { createLoop, type Loop } from '../util/loop.js';
import type { YieldGate } from '../util/yield-gate.js';
import { type HostAnswer, type HostPullRequest, type PullRequestHost, placeOf } from './github.js';
import { checkInterval, FOLLOWING, type FollowingPace, failedCheckInterval } from './pace.js';

/** Most checks in flight at once. */
export const CHECK_CONCURRENCY = 4;
/** Most jobs looked at for new pull requests in one step. */
const LOOK_BATCH = 200;
/**
 * How far back each look reaches before the last one began: a job's outcome is stamped with its
 * instance's clock and committed a moment later, so a look must overlap the one before it.
 */
const LOOK_OVERLAP_MS = 5 * 60_000;

export interface FollowerOptions {
  store: Pick<
    PullRequestsStore,
    | 'pullRequestCandidates'
    | 'followPullRequests'
    | 'claimDuePullRequests'
    | 'nextPullRequestCheckAt'
    | 'recordPullRequestCheck'
    | 'releasePullRequest'
    | 'pauseFollowing'
  > &
    Pick<JobsStore, 'getJob'>;
  instanceId: string;
  host: PullRequestHost;
  /** The web host of the pull requests `host` answers for (see `webHostOf`). */
  webHost: string;
  hints: RenderHints;
  /** Wakes the outbox after a write that queued a post. */
  outbox: Wakeable;
  logger: Logger;
  metrics: Pick<MetricsHooks, 'pullRequest'>;
  /** How long a claim on a check lasts: the host's call (and a redirect) and a margin. */
  lease: Lease;
  /** The host's request budget now, per second: how many checks to claim at once. */
  rate: () => number;
  pace?: FollowingPace;
  gate?: YieldGate;
  now?: () => number;
  random?: () => number;
}

export interface Follower extends Loop {
  /** Checks one claimed pull request now (what the loop does for each it claimed). Exposed for tests. */
  checkOne(pr: PullRequestRecord): Promise<void>;
}

/**
 * Follows the pull requests jobs' runs opened, until each is merged or closed or the bound
 * passes: finds them on the jobs, checks each when due (claimed, so one instance checks it),
 * and records what changed with the card's update, and the requester's notice when it ended, in
 * one write.
 */
export function createFollower(options: FollowerOptions): Follower {
  const { store, host, logger, metrics } = options;
  const pace = options.pace ?? FOLLOWING;
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const inFlight = new Set<number>();
  let lookedAt = now() - pace.boundMs;
  let nextLookAt = 0;
  let pausedUntil = 0;
  const told = new Set<string>();

  /** Said once per process at `warn`, then at `debug`: a refused token must not flood the logs. */
  const once = (key: string, msg: string, fields: Record<string, unknown>) => {
    if (told.has(key)) return logger.debug(msg, fields);
    told.add(key);
    logger.warn(msg, fields);
  };

  /** The pull requests of jobs finished since the last look, recorded (those on record left alone). */
  async function look(): Promise<boolean> {
    const startedAt = now();
    const since = Math.max(lookedAt - LOOK_OVERLAP_MS, startedAt - pace.boundMs);
    const candidates = await store.pullRequestCandidates(since, LOOK_BATCH);
    const found: NewPullRequest[] = [];
    for (const c of candidates) {
      const { passesLinkRule, place } = placeOf(c.prLink, options.webHost, options.hints.prLinkHosts);
      // A link the link rule refuses is shown as inert text, never followed.
      if (!passesLinkRule) continue;
      const job = place ? undefined : await store.getJob(c.jobId);
      // Not followed: said on the card now, as no check will come to say anything.
      const enqueue = job ? cardUpdate(job) : [];
      found.push({
        jobId: c.jobId,
        projectId: c.projectId,
        url: c.prLink,
        where: place ?? null,
        openedAt: c.updatedAt,
        enqueue,
      });
    }
    const recorded = found.length > 0 ? await store.followPullRequests(found, now()) : [];
    if (recorded.some((pr) => pr.following === 'other_host')) options.outbox.kick();
    for (const pr of recorded) if (pr.following === 'following') metrics.pullRequest('opened');
    // A full batch: look again at once from where it stopped.
    const full = candidates.length === LOOK_BATCH;
    lookedAt = full ? (candidates.at(-1)?.updatedAt ?? startedAt) + LOOK_OVERLAP_MS : startedAt;
    nextLookAt = full ? 0 : startedAt + pace.lookEveryMs;
    return full;
  }

  const jitter = (ms: number) => Math.round(ms * (1 - 0.2 * random()));
  const ageOf = (pr: PullRequestRecord) => Math.max(0, now() - pr.openedAt);
  /** The next check of an open pull request, never later than its bound. */
  const nextCheck = (pr: PullRequestRecord, intervalMs: number) =>
    Math.min(now() + jitter(intervalMs), pr.openedAt + pace.boundMs);
  const healthy = (pr: PullRequestRecord) => nextCheck(pr, checkInterval(ageOf(pr), pace));

  /** Writes a check's patch (ending the claim) with what it queues; wakes the outbox when it did. */
  async function record(pr: PullRequestRecord, patch: PullRequestPatch, enqueue: NewOutboxItem[] = []) {
    // A check answered while a rate limit paused the others waits for the pause too.
    if (patch.nextCheckAt) patch.nextCheckAt = Math.max(patch.nextCheckAt, pausedUntil);
    const written = await store.recordPullRequestCheck(pr.id, options.instanceId, patch, enqueue, now());
    if (!written)
      logger.info('pull request check not recorded: another instance took it over', { id: pr.id });
    else if (enqueue.length > 0) options.outbox.kick();
    return written;
  }

  /** Following ends for `following` without news of the host: the card says why. */
  async function stop(pr: PullRequestRecord, following: PullRequestPatch['following']) {
    const job = await store.getJob(pr.jobId);
    return record(pr, { following, nextCheckAt: null }, job ? cardUpdate(job) : []);
  }

  /** What the host said of an open or ended pull request, recorded with the card and notice it calls for. */
  async function answered(pr: PullRequestRecord, seen: HostPullRequest, etag: string | null): Promise<void> {
    const ended = seen.state !== 'open';
    const patch: PullRequestPatch = {
      state: seen.state,
      title: seen.title,
      mergedBy: seen.mergedBy,
      etag,
      checkFailures: 0,
      ...(ended
        ? { following: 'ended', nextCheckAt: null, endedAt: seen.mergedAt ?? now() }
        : { nextCheckAt: healthy(pr) }),
    };
    // One card update per change of state, not per check (a new head or title is no news).
    if (seen.state === pr.state) {
      await record(pr, patch);
      return;
    }
    const job = await store.getJob(pr.jobId);
    const after = { ...pr, ...patch };
    const enqueue: NewOutboxItem[] = job ? cardUpdate(job) : [];
    if (job?.threadTs && ended) {
      const key = keys.pullRequestEnded({ jobId: job.id, pullRequestId: pr.id });
      const text = pullRequestEndedText(after, job, options.hints);
      enqueue.unshift(threadPost({ job, key, kind: 'notice', text }));
    }
    if (!(await record(pr, patch, enqueue)) || !ended) return;
    const mergedAfter = seen.state === 'merged' ? ((after.endedAt ?? now()) - pr.openedAt) / 1000 : undefined;
    metrics.pullRequest(seen.state === 'merged' ? 'merged' : 'closed', mergedAfter);
    logger.info('pull request ended', { jobId: pr.jobId, id: pr.id, state: seen.state });
  }

  /** A rate limit: every instance waits until it ends (the store holds every check back). */
  async function pause(pr: PullRequestRecord, until: number) {
    pausedUntil = Math.max(pausedUntil, until);
    await store.pauseFollowing(until);
    logger.warn('GitHub asked to wait (rate limit); no pull request is checked until then', {
      until: new Date(until).toISOString(),
    });
    await record(pr, { nextCheckAt: Math.max(until, pr.nextCheckAt ?? 0) });
  }

  async function onAnswer(pr: PullRequestRecord, answer: HostAnswer) {
    switch (answer.kind) {
      case 'changed':
        await answered(pr, answer.pullRequest, answer.etag);
        break;
      case 'unchanged':
        await record(pr, { checkFailures: 0, nextCheckAt: healthy(pr) });
        break;
      case 'rate_limited':
        await pause(pr, answer.until);
        break;
      case 'missing':
        logger.info('GitHub no longer finds a followed pull request; following it ends', { id: pr.id });
        await stop(pr, 'missing');
        break;
      case 'refused':
        once(
          `refused:${answer.status}`,
          'GitHub refused GITHUB_TOKEN for a pull request; it is no longer followed',
          {
            id: pr.id,
            status: answer.status,
          },
        );
        await stop(pr, 'refused');
        break;
      case 'unavailable': {
        const failures = pr.checkFailures + 1;
        once(`unavailable:${answer.why}`, 'could not check a pull request; will try again later', {
          id: pr.id,
          why: answer.why,
          failures,
        });
        await record(pr, {
          checkFailures: failures,
          nextCheckAt: nextCheck(pr, failedCheckInterval(failures, pace)),
        });
        break;
      }
    }
    if ('pauseUntil' in answer && answer.pauseUntil !== undefined) {
      pausedUntil = Math.max(pausedUntil, answer.pauseUntil);
      await store.pauseFollowing(answer.pauseUntil);
    }
  }

  /** Checks a claimed pull request; the claim ends whatever happens. */
  async function checkOne(pr: PullRequestRecord): Promise<void> {
    let recorded = false;
    try {
      if (!pr.owner || !pr.repo || pr.number === null) return;
      if (ageOf(pr) >= pace.boundMs) {
        recorded = await stop(pr, 'expired');
        return;
      }
      if (now() < pausedUntil) return;
      await onAnswer(pr, await host.check({ owner: pr.owner, repo: pr.repo, number: pr.number }, pr.etag));
      recorded = true;
    } finally {
      if (!recorded) await store.releasePullRequest(pr.id, options.instanceId);
    }
  }

  const loop = createLoop({
    ...(options.gate ? { gate: options.gate } : {}),
    name: 'pull request follower',
    logger,
    idleMs: Math.min(pace.lookEveryMs, 5_000),
    async step() {
      if (now() >= nextLookAt && (await look())) return { busy: true };
      if (now() < pausedUntil) return { busy: false, sleepMs: pausedUntil - now() };
      // In flight at once: no more than the budget spends in two seconds (one at least), so a
      // claim seldom waits long for the budget; its lease covers the wait for those ahead of it.
      const rate = options.rate();
      const most = Math.max(1, Math.min(CHECK_CONCURRENCY, Math.floor(rate * 2)));
      const batch = most - inFlight.size;
      if (batch <= 0) return { busy: false };
      const waitMs = Math.ceil((1_000 / Math.max(rate, 1e-3)) * most);
      const leaseMs = options.lease.leaseMs + waitMs;
      const claimed = await store.claimDuePullRequests(options.instanceId, now(), batch, leaseMs);
      for (const pr of claimed.filter((c) => !inFlight.has(c.id))) {
        inFlight.add(pr.id);
        loop.track(
          checkOne(pr)
            .catch((error) => logger.error('pull request check crashed', { id: pr.id, error }))
            .finally(() => {
              inFlight.delete(pr.id);
              loop.kick();
            }),
        );
      }
      if (claimed.length === batch) return { busy: inFlight.size < most };
      const next = await store.nextPullRequestCheckAt(now());
      const until = Math.min(next ?? Number.POSITIVE_INFINITY, nextLookAt);
      return { busy: false, sleepMs: Math.max(1, until - now()) };
    },
  });

  return { ...loop, checkOne };
}
