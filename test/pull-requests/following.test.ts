import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { followPullRequests } from '../../src/pull-requests/following.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/types.js';
import { createYieldGate } from '../../src/util/yield-gate.js';
import { FOLLOW_HINTS, jobWithPullRequest, keptLogger, QUICK } from '../helpers/following-world.js';
import { GITHUB_TOKEN, type GitHubStandIn, startGitHubStandIn } from '../helpers/github-stand-in.js';
import { sleep, waitFor } from '../helpers/http.js';

describe('following pull requests as the app builds it', () => {
  let store: Store;
  let github: GitHubStandIn;
  beforeEach(async () => {
    store = openSqliteStore(':memory:');
    github = await startGitHubStandIn();
    github.open('example', 'docs', 7);
  });
  afterEach(async () => {
    await github.close();
    await store.close();
  });

  const base = (token: string | undefined) => ({
    config: { github: { token, apiUrl: github.apiUrl, checkEveryMs: undefined } },
    options: { pullRequestPace: QUICK },
    store,
    instanceId: 'i-one',
    logger: keptLogger(),
    hints: FOLLOW_HINTS,
    metrics: { hooks: { pullRequest() {} } },
    gate: createYieldGate(),
  });

  it('asks nothing of GitHub and records nothing without GITHUB_TOKEN', async () => {
    const job = await jobWithPullRequest(store, 'no-token', github.link('example', 'docs', 7));
    const loop = followPullRequests(base(undefined), { kick() {} }, { liveCount: () => 1 });
    loop.start();
    await sleep(100);
    await loop.stop();
    expect(github.requests).toEqual([]);
    expect(await store.pullRequestOfJob(job.id)).toBeUndefined();
  });

  it('follows with the token, on the host GITHUB_API_URL answers for', async () => {
    const job = await jobWithPullRequest(store, 'token', github.link('example', 'docs', 7));
    const loop = followPullRequests(base(GITHUB_TOKEN), { kick() {} }, { liveCount: () => 2 });
    loop.start();
    try {
      await waitFor('open', async () => (await store.pullRequestOfJob(job.id))?.state === 'open', 5_000);
    } finally {
      await loop.stop();
    }
    expect(github.violations).toEqual([]);
  });
});
