import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GITHUB_TOKEN, type GitHubStandIn, startGitHubStandIn } from '../helpers/github-stand-in.js';
import { type Harness, startHarness, stopChecked } from '../helpers/harness.js';
import { sleep, waitFor } from '../helpers/http.js';
import { parseExposition } from '../helpers/prometheus.js';
import { leaks } from '../helpers/secrets.js';

const METRICS_TOKEN = 'metrics-test-token-0000';

/** Quick checks, so the test sees several 304s in a second. */
const PACE = {
  boundMs: 3_600_000,
  firstIntervalMs: 40,
  youngForMs: 60_000,
  maxIntervalMs: 200,
  lookEveryMs: 20,
};

type Block = { fields?: { text: string }[] };
const fieldText = (m: { blocks?: Record<string, unknown>[] } | undefined) =>
  ((m?.blocks ?? []) as Block[])
    .flatMap((b) => b.fields ?? [])
    .map((f) => f.text)
    .join('\n');

describe('a pull request followed to its end through the real app', () => {
  let github: GitHubStandIn;
  let h: Harness | undefined;

  beforeEach(async () => {
    github = await startGitHubStandIn();
  });
  afterEach(async () => {
    await stopChecked(h);
    h = undefined;
    await github.close();
    expect(github.violations).toEqual([]);
  });

  const start = (overrides: Record<string, string> = {}) =>
    startHarness(
      {
        GITHUB_TOKEN,
        GITHUB_API_URL: github.apiUrl,
        PR_LINK_HOSTS: 'github.com,127.0.0.1',
        METRICS_TOKEN,
        ...overrides,
      },
      { pullRequestPace: PACE },
    );

  it('shows the card open then merged by whom, tells the requester once, and asks conditionally in between', async () => {
    h = await start();
    const harness = h;
    const { threadTs, channel, jobId } = await harness.startJob();
    github.open('example', 'docs', 1, 'Document the <!here> quickstart');
    harness.agent.complete(jobId, github.link('example', 'docs', 1));
    const card = () => harness.slack.messages.find((m) => m.ts === threadTs);
    await waitFor('the card shows it open', () => fieldText(card()).includes('Open: Document the'));
    expect(fieldText(card())).toContain(
      '*Pull request*\n:large_green_circle: Open: Document the &lt;!here&gt; quickstart',
    );
    await waitFor('unchanged checks', () => github.requestsFor('example', 'docs', 1).length >= 5);
    await harness.settled();
    const updatesWhileOpen = harness.slack.callsTo('chat.update').length;
    await waitFor('more unchanged checks', () => github.requestsFor('example', 'docs', 1).length >= 8);
    await harness.settled();
    // An unchanged pull request costs no Slack call.
    expect(harness.slack.callsTo('chat.update').length).toBe(updatesWhileOpen);

    github.merge('example', 'docs', 1, 'octo-cat');
    await waitFor('the card shows it merged', () => fieldText(card()).includes('Merged by `octo-cat`'));
    await waitFor(
      'the session closed',
      () => harness.slack.sessionOf(channel, threadTs)?.status === 'closed',
    );
    await harness.settled();
    // The card, the command's thread root, shows it merged itself: no emoji goes on it.
    expect(harness.slack.reactionsOn(channel, threadTs)).toEqual([]);
    expect(harness.slack.callsTo('reactions.add')).toEqual([]);
    const told = harness.slack.threadPosts(threadTs).filter((m) => m.text.includes('was merged by'));
    expect(told).toHaveLength(1);
    expect(told[0]?.text).toContain('<@U0ALICE> :large_purple_circle:');
    expect(told[0]?.text).toContain('was merged by `octo-cat`');
    expect(told[0]?.text).not.toContain('<@octo-cat');
    expect(harness.slack.sessions.get(`${channel}:${threadTs}`)?.status).toBe('closed');

    // Every check after the first was conditional, and unchanged ones cost a 304 only.
    const requests = github.requestsFor('example', 'docs', 1);
    expect(requests[0]).toMatchObject({ status: 200, ifNoneMatch: null });
    expect(requests.slice(1).every((r) => r.ifNoneMatch !== null)).toBe(true);
    expect(requests.slice(1, -1).every((r) => r.status === 304)).toBe(true);
    expect(requests.at(-1)?.status).toBe(200);

    // The figures: in status, in the App Home's figures (the same lines) and in /metrics.
    const status = (await (await harness.command({ text: 'status' })).json()) as { text: string };
    expect(status.text).toMatch(
      /`proj_test\w*`: 1 pull request opened · 1 merged · 0 closed unmerged · 0 still open · median time to merge/,
    );
    const scrape = await fetch(`${harness.base()}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    const metrics = parseExposition(await scrape.text());
    expect(metrics.value('docs_agent_pull_requests_total', { state: 'opened' })).toBe(1);
    expect(metrics.value('docs_agent_pull_requests_total', { state: 'merged' })).toBe(1);

    // Told once across a restart; merged is the end: nothing more is asked.
    const asked = github.requests.length;
    await harness.restart();
    await sleep(200);
    await harness.settled();
    expect(harness.slack.threadPosts(threadTs).filter((m) => m.text.includes('was merged by'))).toHaveLength(
      1,
    );
    expect(github.requests.length).toBe(asked);
    expect(leaks(harness.logs, { githubToken: GITHUB_TOKEN })).toEqual([]);
    expect(leaks(JSON.stringify(harness.slack.calls).split('\n'), { githubToken: GITHUB_TOKEN })).toEqual([]);
  });

  it('asks GitHub nothing, and shows nothing new, without GITHUB_TOKEN', async () => {
    h = await start({ GITHUB_TOKEN: '' });
    const harness = h;
    const { threadTs, jobId } = await harness.startJob();
    github.open('example', 'docs', 1);
    harness.agent.complete(jobId, github.link('example', 'docs', 1));
    await waitFor('outcome', () => harness.slack.threadPosts(threadTs).length > 0);
    await sleep(200);
    await harness.settled();
    expect(github.requests).toEqual([]);
    expect(fieldText(harness.slack.messages.find((m) => m.ts === threadTs))).not.toContain('Pull request');
  });
});
