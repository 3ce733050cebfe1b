import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { GITHUB_TOKEN, type GitHubStandIn, startGitHubStandIn } from '../helpers/github-stand-in.js';
import { waitFor } from '../helpers/http.js';
import { leaks } from '../helpers/secrets.js';
import type { SlackCall } from '../helpers/slack-stand-in.js';
import { add, type Counts, emptyCounts } from './ledger.js';
import { recordRow } from './report.js';
import { createWorld, type KillOnce, killOnce, type World } from './world.js';

/*
 * A pull request a job's run opened, followed on GitHub until it is merged, across a SIGKILL:
 * once everything settles, the card shows it merged by whom, the requester is told in the thread
 * exactly once, the instruction still got its outcome, and the GitHub token showed nowhere.
 */

const MERGED = 'was merged by';
const isMergedPost = (c: SlackCall) =>
  c.method === 'chat.postMessage' && String(c.args.text ?? '').includes(MERGED);

/** Where the process is killed: at GitHub's "merged" answer, or at the notice's Slack post. */
const POINTS: { name: string; github?: true; slack?: { afterAnswer: boolean } }[] = [
  { name: 'after GitHub answered merged, before the store write', github: true },
  { name: 'while the merged notice is sent to Slack', slack: { afterAnswer: false } },
  { name: 'after Slack accepted the merged notice, before marked delivered', slack: { afterAnswer: true } },
];
/** Variant 0 is seen open, then merged; variant 1 is merged before its first check. */
const RUNS_PER_POINT = 2;
const PR = ['example', 'docs', 7] as const;

type Block = { fields?: { text: string }[] };
/** The status card's fields, as Slack shows them. */
const cardText = (world: World, threadTs: string) =>
  ((world.slack.messages.find((m) => m.ts === threadTs)?.blocks ?? []) as Block[])
    .flatMap((b) => b.fields ?? [])
    .map((f) => f.text)
    .join('\n');

/** The followed pull request's row as the store has it (read-only, beside the app). */
function storedPullRequest(world: World): { state: string | null; following: string } | undefined {
  const db = new Database(world.databasePath, { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT state, following FROM pull_requests').get() as
      | { state: string | null; following: string }
      | undefined;
  } finally {
    db.close();
  }
}

async function killRun(point: (typeof POINTS)[number], variant: number, details: string[]): Promise<Counts> {
  const what = `${point.name} #${variant}`;
  let kill: KillOnce | undefined;
  const github: GitHubStandIn = await startGitHubStandIn({
    after: ({ pullRequest, status }) =>
      void (point.github && status === 200 && pullRequest.merged && kill?.hit()),
  });
  const world = await createWorld({
    agent: { finishAfterGets: 2, finishWith: () => ({ status: 'completed', prLink: github.link(...PR) }) },
    slackHooks: {
      before: (c) =>
        point.slack?.afterAnswer === false && isMergedPost(c) && kill?.hit() ? 'drop' : undefined,
      after: (c) => void (point.slack?.afterAnswer && isMergedPost(c) && kill?.hit()),
    },
    env: {
      GITHUB_TOKEN,
      GITHUB_API_URL: github.apiUrl,
      PR_LINK_HOSTS: 'github.com,127.0.0.1',
      GITHUB_CHECK_EVERY_MS: '50',
    },
  });
  kill = killOnce(() => world.app);
  const logs: string[] = [];
  try {
    github.open(...PR, 'Document the <!here> quickstart');
    if (variant === 1) github.merge(...PR, 'octo-cat');
    await world.start();
    const ins = await world.command(`Document the merged pull request ${point.name} ${variant}`);
    const threadTs = await waitFor('thread', () => world.threadOf(ins), 10_000);
    if (variant === 0) {
      await waitFor(
        'the card shows it open',
        () => cardText(world, threadTs).includes('Open: Document'),
        15_000,
      );
      github.merge(...PR, 'octo-cat');
    }
    const told = () => world.slack.threadPosts(threadTs).filter((m) => m.text.includes(MERGED));
    await waitFor('kill or told', () => kill.killed || (told().length > 0 && world.isSettled()), 15_000);
    if (!kill.killed) details.push(`${what}: the kill point was not reached`);
    else {
      await world.app.exited;
      // Killed at GitHub's answer: the store must not have it yet, or the kill came too late.
      if (point.github && storedPullRequest(world)?.state === 'merged')
        details.push(`${what}: the store had the merge before the kill`);
      logs.push(world.app.output());
      await world.start();
    }
    // After a kill at GitHub's answer, the check waits for its claim to run out (see the report).
    await waitFor('ended and told', () => storedPullRequest(world)?.following === 'ended', 45_000);
    await world.settle(15_000);
    expect(await world.app.stop()).toBe(0);
    logs.push(world.app.output());

    if (!cardText(world, threadTs).includes('Merged by `octo-cat`'))
      details.push(`${what}: the card does not show it merged by octo-cat`);
    const notices = told();
    const counts = world.account(details);
    if (notices.length !== 1)
      details.push(`${what}: the requester was told ${notices.length} times that it was merged`);
    else if (!notices[0]?.text.includes('<@U0ALICE>'))
      details.push(`${what}: the notice is not to the requester`);
    const leaked = [
      ...leaks(logs.join('\n').split('\n'), { githubToken: GITHUB_TOKEN }),
      ...leaks(JSON.stringify(world.slack.calls).split('\n'), { githubToken: GITHUB_TOKEN }),
    ];
    if (leaked.length > 0) details.push(`${what}: the GitHub token leaked: ${leaked.join(', ')}`);
    if (github.violations.length > 0) details.push(`${what}: ${github.violations.join(', ')}`);
    // The ledger's "told" is for instructions with no outcome: a merged notice missing counts as
    // lost, a second one as doubled.
    return {
      ...counts,
      duplicates: counts.duplicates + (notices.length > 1 ? 1 : 0),
      lost: counts.lost + (notices.length === 0 ? 1 : 0) + (leaked.length > 0 ? 1 : 0),
    };
  } finally {
    await world.close();
    await github.close();
  }
}

describe('a merged pull request told once across SIGKILL and restart', () => {
  for (const point of POINTS) {
    it(`${point.name}: merged on the card, told once`, async () => {
      const details: string[] = [];
      // The variants run side by side: each has its own stand-ins, store and process.
      const runs = await Promise.all(
        Array.from({ length: RUNS_PER_POINT }, (_, variant) => killRun(point, variant, details)),
      );
      const total = runs.reduce(add, emptyCounts());
      recordRow('Pull requests followed: SIGKILL and restart', point.name, total, details);
      expect(details, details.join('\n')).toEqual([]);
      expect(total.lost).toBe(0);
      expect(total.duplicates).toBe(0);
      expect(total.outcomesDelivered).toBe(RUNS_PER_POINT);
    });
  }
});
