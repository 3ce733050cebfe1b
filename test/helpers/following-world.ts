import type { RenderHints } from '../../src/blocks/messages.js';
import { leaseFor } from '../../src/cluster/membership.js';
import type { Logger } from '../../src/logging/logger.js';
import { createFollower, type Follower } from '../../src/pull-requests/follower.js';
import { createGitHub } from '../../src/pull-requests/github.js';
import type { FollowingPace } from '../../src/pull-requests/pace.js';
import type { JobRecord, Store } from '../../src/store/types.js';
import { GITHUB_TOKEN, type GitHubStandIn } from './github-stand-in.js';
import { insertFinishedJob } from './job-record.js';

/** Links on the GitHub stand-in's host are trusted, as `PR_LINK_HOSTS` would say. */
export const FOLLOW_HINTS: RenderHints = {
  mode: 'all',
  asideMarker: '//',
  prLinkHosts: ['127.0.0.1', 'gitlab.example.com'],
};

/** Quick checks, so a test sees many in a second; the bound far away unless a test moves it. */
export const QUICK: FollowingPace = {
  boundMs: 3_600_000,
  firstIntervalMs: 30,
  youngForMs: 60_000,
  maxIntervalMs: 200,
  lookEveryMs: 20,
};

/** A logger that keeps its lines, for tests that read what was said (and how often). */
export function keptLogger(lines: { level: string; msg: string; fields?: unknown }[] = []): Logger {
  const logger: Logger = {
    debug: (msg, fields) => void lines.push({ level: 'debug', msg, fields }),
    info: (msg, fields) => void lines.push({ level: 'info', msg, fields }),
    warn: (msg, fields) => void lines.push({ level: 'warn', msg, fields }),
    error: (msg, fields) => void lines.push({ level: 'error', msg, fields }),
    child: () => logger,
  };
  return logger;
}

let threads = 0;

/** A job whose run opened `prLink`, finished at `at`, with a thread and card of its own. */
export async function jobWithPullRequest(store: Store, key: string, prLink: string, at = Date.now()) {
  const threadTs = `1700000000.${String(++threads).padStart(6, '0')}`;
  const { job } = await insertFinishedJob(store, at, {
    outcome: 'completed_pr',
    threadTs,
    job: { teamId: 'T0TEAM', instruction: `Document ${key}`, triggerKey: key },
    patch: { prLink, agentJobId: `agent-${key}` },
  });
  return (await store.getJob(job.id)) as JobRecord;
}

/** A follower on `store` and the GitHub stand-in, counting what it reports. */
export function followerOn(
  store: Store,
  github: GitHubStandIn,
  options: { instanceId?: string; pace?: FollowingPace; now?: () => number; logger?: Logger } = {},
) {
  const reported: [string, number | undefined][] = [];
  let kicks = 0;
  const follower: Follower = createFollower({
    store,
    instanceId: options.instanceId ?? 'i-one',
    host: createGitHub({
      apiUrl: github.apiUrl,
      token: GITHUB_TOKEN,
      budget: { take: async () => undefined },
    }),
    webHost: '127.0.0.1',
    hints: FOLLOW_HINTS,
    outbox: {
      kick() {
        kicks += 1;
      },
    },
    logger: options.logger ?? keptLogger(),
    metrics: { pullRequest: (state, seconds) => void reported.push([state, seconds]) },
    lease: leaseFor(2_000),
    rate: () => 1_000,
    pace: options.pace ?? QUICK,
    ...(options.now ? { now: options.now } : {}),
  });
  return { follower, reported, kicks: () => kicks };
}
