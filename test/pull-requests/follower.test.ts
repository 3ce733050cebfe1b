import type Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Follower } from '../../src/pull-requests/follower.js';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { PullRequestRecord, Store } from '../../src/store/types.js';
import { followerOn, jobWithPullRequest, keptLogger, QUICK } from '../helpers/following-world.js';
import { type GitHubStandIn, startGitHubStandIn } from '../helpers/github-stand-in.js';
import { sleep, waitFor } from '../helpers/http.js';
import { dropFreshSchema, freshSchemaUrl, postgresAvailable } from '../helpers/postgres.js';

type SqliteStore = Store & { db: Database.Database };

/** What the outbox holds of a job: each item's kind, its key and, for a post, its text. */
const queued = (store: SqliteStore, jobId: number) =>
  (
    store.db
      .prepare('SELECT kind, dedupe_key, payload FROM outbox WHERE job_id = ? ORDER BY id')
      .all(jobId) as {
      kind: string;
      dedupe_key: string | null;
      payload: string;
    }[]
  ).map((row) => ({
    kind: row.kind,
    key: row.dedupe_key,
    text: (JSON.parse(row.payload) as { text?: string }).text,
  }));

describe('following a pull request to its end', () => {
  let store: SqliteStore;
  let github: GitHubStandIn;
  let follower: Follower | undefined;

  beforeEach(async () => {
    store = openSqliteStore(':memory:');
    github = await startGitHubStandIn();
    github.open('example', 'docs', 7, 'Document the *quickstart*');
  });
  afterEach(async () => {
    await follower?.stop();
    follower = undefined;
    await github.close();
    await store.close();
    expect(github.violations).toEqual([]);
  });

  const start = (options: Parameters<typeof followerOn>[2] = {}) => {
    const world = followerOn(store, github, options);
    follower = world.follower;
    follower.start();
    return world;
  };
  const pullRequestOf = async (jobId: number) => (await store.pullRequestOfJob(jobId)) as PullRequestRecord;

  it('shows it open, then merged by whom, tells the requester once, and asks conditionally in between', async () => {
    const job = await jobWithPullRequest(store, 'merged', github.link('example', 'docs', 7));
    const { reported } = start();
    await waitFor('the first answer', async () => (await store.pullRequestOfJob(job.id))?.state === 'open');
    expect(await pullRequestOf(job.id)).toMatchObject({
      title: 'Document the *quickstart*',
      following: 'following',
    });
    await waitFor('unchanged checks', () => github.requestsFor('example', 'docs', 7).length >= 4);
    // Every check after the first sent the ETag back, and cost a 304.
    const [first, ...rest] = github.requestsFor('example', 'docs', 7);
    expect(first?.ifNoneMatch).toBeNull();
    expect(rest.every((r) => r.status === 304 && r.ifNoneMatch !== null)).toBe(true);
    // One card update for the change to open, none per unchanged check.
    expect(queued(store, job.id).map((q) => q.kind)).toEqual(['update_root']);

    github.merge('example', 'docs', 7, 'octocat');
    await waitFor('the merge', async () => (await store.pullRequestOfJob(job.id))?.state === 'merged');
    const seen = github.requestsFor('example', 'docs', 7).length;
    await sleep(150);
    // Merged: no longer asked about.
    expect(github.requestsFor('example', 'docs', 7).length).toBe(seen);
    expect(await pullRequestOf(job.id)).toMatchObject({
      following: 'ended',
      mergedBy: 'octocat',
      nextCheckAt: null,
    });
    const items = queued(store, job.id);
    expect(items.map((q) => [q.kind, q.key])).toEqual([
      ['update_root', null],
      ['post', `pull-request-ended:${(await pullRequestOf(job.id)).id}:${job.id}`],
      ['update_root', null],
    ]);
    expect(items[1]?.text).toContain('<@U0ALICE> :large_purple_circle:');
    expect(items[1]?.text).toContain('was merged by `octocat`');
    expect(reported.map(([state]) => state)).toEqual(['opened', 'merged']);
    expect(reported[1]?.[1]).toBeGreaterThanOrEqual(0);
  });

  it('ends following a pull request closed without merging, and says so once', async () => {
    const job = await jobWithPullRequest(store, 'closed', github.link('example', 'docs', 7));
    github.closeUnmerged('example', 'docs', 7);
    const { reported } = start();
    await waitFor('the close', async () => (await store.pullRequestOfJob(job.id))?.following === 'ended');
    expect((await pullRequestOf(job.id)).state).toBe('closed');
    const posts = queued(store, job.id).filter((q) => q.kind === 'post');
    expect(posts).toHaveLength(1);
    expect(posts[0]?.text).toContain('was closed without being merged');
    expect(reported.map(([state]) => state)).toEqual(['opened', 'closed']);
  });

  it('keeps following a pull request closed and reopened between checks, and one force-pushed', async () => {
    const job = await jobWithPullRequest(store, 'reopened', github.link('example', 'docs', 7));
    start();
    await waitFor('the first answer', async () => (await store.pullRequestOfJob(job.id))?.state === 'open');
    github.closeUnmerged('example', 'docs', 7);
    github.reopen('example', 'docs', 7);
    github.forcePush('example', 'docs', 7);
    const before = github.requestsFor('example', 'docs', 7).length;
    await waitFor('a full answer for the new head', () =>
      github
        .requestsFor('example', 'docs', 7)
        .slice(before)
        .some((r) => r.status === 200),
    );
    await waitFor('a 304 for the new ETag', () =>
      github
        .requestsFor('example', 'docs', 7)
        .slice(before)
        .some((r) => r.status === 304),
    );
    expect(await pullRequestOf(job.id)).toMatchObject({ state: 'open', following: 'following' });
    // Still open: no card update for a new head, no post.
    expect(queued(store, job.id).map((q) => q.kind)).toEqual(['update_root']);
  });

  it('ends following a deleted repository (404) with "could not follow", never a crash', async () => {
    const job = await jobWithPullRequest(store, 'deleted', github.link('example', 'docs', 7));
    github.remove('example', 'docs', 7);
    start();
    await waitFor(
      'following ended',
      async () => (await store.pullRequestOfJob(job.id))?.following === 'missing',
    );
    expect(await pullRequestOf(job.id)).toMatchObject({ nextCheckAt: null, state: null });
    expect(queued(store, job.id).map((q) => q.kind)).toEqual(['update_root']);
  });

  it('ends following on a refused token, logged once at warn however many pull requests it refuses', async () => {
    const lines: { level: string; msg: string }[] = [];
    const jobs = [
      await jobWithPullRequest(store, 'refused-1', github.link('example', 'docs', 7)),
      await jobWithPullRequest(store, 'refused-2', github.link('example', 'docs', 7)),
      await jobWithPullRequest(store, 'refused-3', github.link('example', 'docs', 7)),
    ];
    github.fail({ status: 401 }, { status: 401 }, { status: 401 });
    start({ logger: keptLogger(lines) });
    for (const job of jobs)
      await waitFor('refused', async () => (await store.pullRequestOfJob(job.id))?.following === 'refused');
    expect(lines.filter((l) => l.level === 'warn' && l.msg.includes('GITHUB_TOKEN'))).toHaveLength(1);
  });

  it('pauses every check until a rate limit ends, and then goes on', async () => {
    const job = await jobWithPullRequest(store, 'limited', github.link('example', 'docs', 7));
    const other = await jobWithPullRequest(store, 'limited-2', github.link('example', 'docs', 8));
    github.open('example', 'docs', 8);
    const resetAt = Math.ceil((Date.now() + 1_500) / 1000);
    github.fail({
      status: 403,
      headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(resetAt) },
    });
    start();
    await waitFor('the limit answered', () => github.pendingFaults() === 0);
    const limitedAt = Date.now();
    // A check already on its way when the limit came back may still land; none starts after.
    await waitFor('the pause recorded', async () =>
      (await Promise.all([job.id, other.id].map(pullRequestOf))).every(
        (pr) => (pr.nextCheckAt ?? 0) >= resetAt * 1000 - 1_000,
      ),
    );
    await sleep(50);
    const count = github.requests.length;
    await sleep(Math.max(0, resetAt * 1000 - Date.now() - 300));
    expect(github.requests.length).toBe(count);
    // The pause is in the store: another instance would wait as well.
    for (const id of [job.id, other.id])
      expect((await pullRequestOf(id)).nextCheckAt).toBeGreaterThanOrEqual(resetAt * 1000 - 1_000);
    await waitFor('checks again after the reset', () => github.requests.length > count, 5_000);
    expect(github.requests[count]?.at).toBeGreaterThanOrEqual(limitedAt + 500);
    await waitFor('both open', async () =>
      (await Promise.all([job.id, other.id].map(pullRequestOf))).every((pr) => pr.state === 'open'),
    );
  });

  it('honours Retry-After on a 429 the same way', async () => {
    const job = await jobWithPullRequest(store, 'retry-after', github.link('example', 'docs', 7));
    github.fail({ status: 429, headers: { 'retry-after': '1' } });
    start();
    await waitFor('the limit answered', () => github.pendingFaults() === 0);
    const at = Date.now();
    await waitFor(
      'answered after the wait',
      async () => (await store.pullRequestOfJob(job.id))?.state === 'open',
    );
    expect(Date.now() - at).toBeGreaterThanOrEqual(700);
  });

  it('backs off through an outage (5xx, hang-ups) and delivers the news after it, once', async () => {
    const job = await jobWithPullRequest(store, 'outage', github.link('example', 'docs', 7));
    github.merge('example', 'docs', 7, 'octocat');
    github.fail({ status: 502 }, { status: 503 }, { hangUp: true }, { status: 500 }, { status: 500 });
    start();
    await waitFor(
      'merged after the outage',
      async () => (await store.pullRequestOfJob(job.id))?.state === 'merged',
      8_000,
    );
    const times = github.requestsFor('example', 'docs', 7).map((r) => r.at);
    const gaps = times.slice(1).map((t, i) => t - (times[i] as number));
    // Doubling waits, not a flood: the last gap before the answer is longer than the first.
    expect(gaps.at(-1)).toBeGreaterThan((gaps[0] as number) * 2);
    expect(queued(store, job.id).filter((q) => q.kind === 'post')).toHaveLength(1);
  });

  it('stops following a pull request that never ends once the bound passes: "no longer followed"', async () => {
    const job = await jobWithPullRequest(store, 'forever', github.link('example', 'docs', 7));
    start({ pace: { ...QUICK, boundMs: 400 } });
    await waitFor('open', async () => (await store.pullRequestOfJob(job.id))?.state === 'open');
    await waitFor(
      'expired',
      async () => (await store.pullRequestOfJob(job.id))?.following === 'expired',
      3_000,
    );
    const seen = github.requests.length;
    await sleep(150);
    expect(github.requests.length).toBe(seen);
    expect(queued(store, job.id).map((q) => q.kind)).toEqual(['update_root', 'update_root']);
  });

  it('shows a link on another trusted host as not followed, and asks nothing of it', async () => {
    const job = await jobWithPullRequest(
      store,
      'gitlab',
      'https://gitlab.example.com/g/p/-/merge_requests/7',
    );
    const untrusted = await jobWithPullRequest(
      store,
      'untrusted',
      'https://evil.example/example/docs/pull/7',
    );
    const { reported } = start();
    await waitFor('recorded', async () => (await store.pullRequestOfJob(job.id))?.following === 'other_host');
    await sleep(100);
    expect(await store.pullRequestOfJob(untrusted.id)).toBeUndefined();
    expect(github.requests).toEqual([]);
    expect(queued(store, job.id).map((q) => q.kind)).toEqual(['update_root']);
    expect(reported).toEqual([]);
  });

  it('follows the new pull request a later run opened in place of the one before', async () => {
    const job = await jobWithPullRequest(store, 'replaced', github.link('example', 'docs', 7));
    github.open('example', 'docs', 9, 'The second try');
    start();
    await waitFor('the first followed', async () => (await store.pullRequestOfJob(job.id))?.state === 'open');
    const first = await pullRequestOf(job.id);
    await store.apply({ jobId: job.id, job: { prLink: github.link('example', 'docs', 9) } }, Date.now());
    await waitFor('the second followed', async () => (await store.pullRequestOfJob(job.id))?.number === 9);
    await waitFor(
      'the second open',
      async () => (await store.pullRequestOfJob(job.id))?.title === 'The second try',
    );
    const old = store.db
      .prepare('SELECT following, next_check_at FROM pull_requests WHERE id = ?')
      .get(first.id);
    expect(old).toEqual({ following: 'replaced', next_check_at: null });
  });
});

const server = await postgresAvailable();
describe.skipIf(!server.ok)('two instances on PostgreSQL following the same pull request', () => {
  let url = '';
  let stores: Store[] = [];
  let github: GitHubStandIn;
  let followers: Follower[] = [];
  beforeEach(async () => {
    url = await freshSchemaUrl();
    stores = [await openPostgresStore(url, { max: 4 }), await openPostgresStore(url, { max: 4 })];
    github = await startGitHubStandIn({ latencyMs: 15 });
    github.open('example', 'docs', 7);
  });
  afterEach(async () => {
    for (const f of followers) await f.stop();
    followers = [];
    for (const s of stores) await s.close();
    await github.close();
    await dropFreshSchema(url);
  });

  it('check it one at a time, record it once, and tell the requester once', async () => {
    const [a, b] = stores as [Store, Store];
    const job = await jobWithPullRequest(a, 'two-instances', github.link('example', 'docs', 7));
    const worlds = [
      followerOn(a, github, { instanceId: 'i-a' }),
      followerOn(b, github, { instanceId: 'i-b' }),
    ];
    followers = worlds.map((w) => w.follower);
    for (const f of followers) f.start();
    await waitFor('checks', () => github.requestsFor('example', 'docs', 7).length >= 8, 8_000);
    github.merge('example', 'docs', 7, 'octocat');
    await waitFor('merged', async () => (await a.pullRequestOfJob(job.id))?.state === 'merged', 8_000);
    await sleep(150);
    expect(github.overlapping).toEqual([]);
    const reported = worlds.flatMap((w) => w.reported.map(([state]) => state)).sort();
    expect(reported).toEqual(['merged', 'opened']);
    const pool = (b as unknown as { pool: import('pg').Pool }).pool;
    const { rows } = await pool.query(
      "SELECT COUNT(*)::int AS n FROM outbox WHERE job_id = $1 AND dedupe_key LIKE 'pull-request-ended:%'",
      [job.id],
    );
    expect(rows[0]?.n).toBe(1);
  });
});
