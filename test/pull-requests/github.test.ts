import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createGitHub,
  DEFAULT_PAUSE_MS,
  MAX_TITLE_CHARS,
  type PullRequestHost,
  placeOf,
  webHostOf,
} from '../../src/pull-requests/github.js';
import { GITHUB_TOKEN, type GitHubStandIn, startGitHubStandIn } from '../helpers/github-stand-in.js';

const NOW = Date.parse('2026-11-30T12:00:00Z');
const PLACE = { owner: 'example', repo: 'docs', number: 7 };

describe('where a pull request link is on GitHub', () => {
  const hosts = ['github.com', 'ghe.example.com', 'gitlab.example.com'];

  it('reads the API’s web host: github.com for GitHub’s API, the host itself for Enterprise Server', () => {
    expect(webHostOf('https://api.github.com')).toBe('github.com');
    expect(webHostOf('https://GHE.example.com/api/v3')).toBe('ghe.example.com');
  });

  it('follows a link on the web host that passed the link rule, by owner, repository and number', () => {
    expect(placeOf('https://github.com/example/docs/pull/7', 'github.com', hosts)).toEqual({
      passesLinkRule: true,
      place: PLACE,
    });
  });

  it('does not follow a link on another trusted host, and says the link rule let it pass', () => {
    expect(placeOf('https://gitlab.example.com/g/p/-/merge_requests/7', 'github.com', hosts)).toEqual({
      passesLinkRule: true,
    });
    expect(placeOf('https://ghe.example.com/example/docs/pull/7', 'github.com', hosts)).toEqual({
      passesLinkRule: true,
    });
  });

  it('refuses what the link rule refuses: other hosts, plain http, a path that is no pull request', () => {
    for (const link of [
      'https://evil.example/example/docs/pull/7',
      'http://github.com/example/docs/pull/7',
      'https://github.com/example/docs/settings',
      'https://user:pw@github.com/example/docs/pull/7',
    ])
      expect(placeOf(link, 'github.com', hosts), link).toEqual({ passesLinkRule: false });
  });

  it('follows no path that could leave the repository’s pulls once put in the API’s path', () => {
    expect(placeOf('https://github.com/a/b/c/pull/7', 'github.com', hosts).place).toBeUndefined();
    expect(placeOf('https://github.com/..%2F/docs/pull/7', 'github.com', hosts).place).toBeUndefined();
  });
});

describe('GitHub’s pull requests, read conditionally', () => {
  let stand: GitHubStandIn;
  let github: PullRequestHost;
  let budgetTaken = 0;
  const answers: unknown[] = [];

  beforeEach(async () => {
    stand = await startGitHubStandIn();
    budgetTaken = 0;
    answers.length = 0;
    github = createGitHub({
      apiUrl: stand.apiUrl,
      token: GITHUB_TOKEN,
      budget: {
        async take() {
          budgetTaken += 1;
        },
      },
      onRequest: (answer) => answers.push(answer),
      timeoutMs: 1_000,
      now: () => NOW,
    });
    stand.open('example', 'docs', 7, 'Document *the* <!here> quickstart');
  });
  afterEach(async () => {
    await stand.close();
    expect(stand.violations).toEqual([]);
  });

  it('answers with the fields it reads, then 304 for the same ETag, each request paced by the budget', async () => {
    const first = await github.check(PLACE, null);
    expect(first).toMatchObject({
      kind: 'changed',
      pullRequest: {
        state: 'open',
        title: 'Document *the* <!here> quickstart',
        mergedBy: null,
        mergedAt: null,
      },
    });
    const etag = first.kind === 'changed' ? first.etag : null;
    expect(etag).toMatch(/^".+"$/);
    expect(await github.check(PLACE, etag)).toEqual({ kind: 'unchanged' });
    expect(stand.requests.map((r) => [r.status, r.ifNoneMatch])).toEqual([
      [200, null],
      [304, etag],
    ]);
    expect(budgetTaken).toBe(2);
    expect(answers).toEqual([200, 304]);
  });

  it('reads a merge (who and when) and a close without merging', async () => {
    stand.merge('example', 'docs', 7, 'octocat', new Date(NOW - 60_000));
    expect(await github.check(PLACE, null)).toMatchObject({
      kind: 'changed',
      pullRequest: { state: 'merged', mergedBy: 'octocat', mergedAt: NOW - 60_000 },
    });
    stand.open('example', 'docs', 8);
    stand.closeUnmerged('example', 'docs', 8);
    expect(await github.check({ ...PLACE, number: 8 }, null)).toMatchObject({
      kind: 'changed',
      pullRequest: { state: 'closed', mergedBy: null },
    });
  });

  it('shows no login that is not a login’s syntax, and cuts a title to one line', async () => {
    stand.merge('example', 'docs', 7, '<@U0ADMIN> hi');
    stand.retitle('example', 'docs', 7, `Line one\nline two\u0007${'x'.repeat(1_000)}`);
    const answer = await github.check(PLACE, null);
    if (answer.kind !== 'changed') throw new Error(answer.kind);
    expect(answer.pullRequest.mergedBy).toBeNull();
    expect(answer.pullRequest.title).toMatch(/^Line one line two x+…$/);
    expect(answer.pullRequest.title.length).toBeLessThanOrEqual(MAX_TITLE_CHARS);
  });

  it('pauses for a secondary limit (403 with Retry-After) and the primary one (x-ratelimit-remaining: 0)', async () => {
    stand.fail(
      { status: 403, headers: { 'retry-after': '120' } },
      {
        status: 403,
        headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(NOW / 1000 + 600) },
      },
      { status: 429, headers: { 'retry-after': '30' } },
      { status: 429 },
    );
    expect(await github.check(PLACE, null)).toEqual({ kind: 'rate_limited', until: NOW + 120_000 });
    expect(await github.check(PLACE, null)).toEqual({ kind: 'rate_limited', until: NOW + 600_000 });
    expect(await github.check(PLACE, null)).toEqual({ kind: 'rate_limited', until: NOW + 30_000 });
    expect(await github.check(PLACE, null)).toEqual({ kind: 'rate_limited', until: NOW + DEFAULT_PAUSE_MS });
  });

  it('tells a 404, a refused token, an outage and a hang-up apart, and quotes no answer', async () => {
    stand.fail(
      { status: 404 },
      { status: 401 },
      { status: 403, body: JSON.stringify({ message: `Resource protected by SSO ${GITHUB_TOKEN}` }) },
      { status: 502, body: 'bad gateway' },
      { hangUp: true },
      { status: 200, body: '{"state": "merged-ish"}' },
    );
    expect(await github.check(PLACE, null)).toEqual({ kind: 'missing' });
    expect(await github.check(PLACE, null)).toEqual({ kind: 'refused', status: 401 });
    expect(await github.check(PLACE, null)).toEqual({ kind: 'refused', status: 403 });
    expect(await github.check(PLACE, null)).toEqual({ kind: 'unavailable', why: 'HTTP 502' });
    expect(await github.check(PLACE, null)).toMatchObject({ kind: 'unavailable', why: /^network error/ });
    expect(await github.check(PLACE, null)).toEqual({
      kind: 'unavailable',
      why: 'an answer that is not a pull request',
    });
  });

  it('follows a redirect of a moved repository on the API’s own host, and no other', async () => {
    stand.fail({ status: 301, headers: { location: `${stand.apiUrl}/repos/example/docs/pulls/7` } });
    expect(await github.check({ ...PLACE, repo: 'old-docs' }, null)).toMatchObject({ kind: 'changed' });
    stand.fail({
      status: 301,
      headers: { location: 'https://elsewhere.example/repos/example/docs/pulls/7' },
    });
    expect(await github.check(PLACE, null)).toEqual({
      kind: 'unavailable',
      why: 'a redirect to another host',
    });
    expect(stand.requests.filter((r) => r.path.includes('elsewhere'))).toEqual([]);
  });

  it('asks for nothing more once GitHub says the token has no requests left, until its reset', async () => {
    const github2 = createGitHub({
      apiUrl: stand.apiUrl,
      token: GITHUB_TOKEN,
      budget: { take: async () => undefined },
      now: () => NOW,
    });
    stand.fail({
      status: 200,
      headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(NOW / 1000 + 900), etag: '"e"' },
      body: JSON.stringify({ state: 'open', title: 't', html_url: 'https://127.0.0.1/example/docs/pull/7' }),
    });
    expect(await github2.check(PLACE, null)).toMatchObject({ kind: 'changed', pauseUntil: NOW + 900_000 });
  });
});
