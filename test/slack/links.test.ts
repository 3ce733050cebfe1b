import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkPullRequestUrl, checkUrl, MAX_URL_CHARS, permalink } from '../../src/slack/links.js';

const HOSTS = ['github.com', 'gitlab.example.com', 'bitbucket.org'];

describe('addresses the bot makes clickable', () => {
  it.each([
    'https://github.com/acme/docs/pull/7',
    'https://github.com/acme/docs/pull/7/',
    'https://github.com/acme/docs/pull/7#discussion',
    'https://GitHub.COM/acme/docs/pull/7',
    'https://gitlab.example.com/writers/docs/-/merge_requests/12',
    'https://gitlab.example.com/writers/sub/group/docs/-/merge_requests/12',
    'https://bitbucket.org/acme/docs/pull-requests/3',
  ])('links the pull request %s', (url) => {
    expect(checkPullRequestUrl(url, HOSTS)).toBe(url);
  });

  it.each([
    ['another host', 'https://phish.example/acme/docs/pull/7'],
    ['a look-alike host', 'https://github.com.phish.example/acme/docs/pull/7'],
    ['a host that only ends like a trusted one', 'https://evilgithub.com/acme/docs/pull/7'],
    ['a subdomain of a trusted host', 'https://gist.github.com/acme/docs/pull/7'],
    ['a trusted host with a trailing dot', 'https://github.com./acme/docs/pull/7'],
    ['a homoglyph of a trusted host', 'https://gіthub.com/acme/docs/pull/7'],
    ['a punycode look-alike', 'https://xn--github-8va.com/acme/docs/pull/7'],
    ['credentials before the host', 'https://github.com@phish.example/acme/docs/pull/7'],
    ['a user name on a trusted host', 'https://eve@github.com/acme/docs/pull/7'],
    ['a password on a trusted host', 'https://eve:secret@github.com/acme/docs/pull/7'],
    ['plain http', 'http://github.com/acme/docs/pull/7'],
    ['a sign-in page of a trusted host', 'https://github.com/login/oauth/authorize?client_id=x'],
    ['a settings page', 'https://github.com/acme/docs/settings'],
    ['a pull request path with no repository', 'https://github.com/acme/pull/7'],
    ['a pull request path with an empty owner', 'https://github.com//acme/docs/pull/7'],
    ['a pull request path that goes on', 'https://github.com/acme/docs/pull/7/files'],
    ['a pull request without a number', 'https://github.com/acme/docs/pull/x7'],
    ['Slack link syntax', 'https://github.com/acme/docs/pull/7|Totally safe'],
    ['a closing bracket', 'https://github.com/acme/docs/pull/7><!channel>'],
    ['an opening bracket', 'https://github.com/acme/docs/pull/7<'],
    ['white space', 'https://github.com/acme/docs/pull/7 extra'],
    ['a tab', 'https://github.com/acme/docs/pull/7\textra'],
    ['a control character', 'https://github.com/acme/docs/pull/7\u0000'],
    ['a delete character', 'https://github.com/acme/docs/pull/7\u007f'],
    ['more than a button holds', `https://github.com/acme/docs/pull/7?${'q'.repeat(3_000)}`],
    ['not an address', 'github.com/acme/docs/pull/7'],
    ['no address', ''],
    ['null', null],
    ['undefined', undefined],
  ])('refuses %s', (_what, url) => {
    expect(checkPullRequestUrl(url, HOSTS)).toBeUndefined();
  });

  it('checks any address for the link syntax and https, without a host list', () => {
    const permalink = 'https://acme.slack.com/archives/C1/p1?thread_ts=1.2&cid=C1';
    expect(checkUrl(permalink)).toBe(permalink);
    expect(checkUrl('https://any.example/')).toBe('https://any.example/');
    expect(checkUrl('javascript:alert(1)')).toBeUndefined();
    expect(checkUrl('http://acme.slack.com/a')).toBeUndefined();
    expect(checkUrl('https://acme.slack.com/a|b')).toBeUndefined();
    expect(checkUrl('https://eve@acme.slack.com/a')).toBeUndefined();
  });

  it('takes an address of exactly the most a button holds, and refuses one character more', () => {
    const base = 'https://github.com/acme/docs/pull/7?q=';
    const longest = base + 'a'.repeat(MAX_URL_CHARS - base.length);
    expect(checkPullRequestUrl(longest, HOSTS)).toBe(longest);
    expect(checkPullRequestUrl(`${longest}a`, HOSTS)).toBeUndefined();
  });
});

/**
 * Host names built from labels of trusted hosts and of look-alikes. The oracle is the list of
 * trusted hosts itself: a host is trusted when, ignoring case, it is one of them, letter for
 * letter. Ending with one (`evilgithub.com`), starting with one (`github.com.evil.example`), a
 * subdomain of one or a trailing dot is not.
 */
const LABELS = [
  'github',
  'GitHub',
  'com',
  'COM',
  'gitlab',
  'example',
  'bitbucket',
  'org',
  'evil',
  'evilgithub',
  'gist',
  'xn--github-8va',
  'github-com',
];
/** A trusted host with each letter in either case. */
const trustedHost = fc
  .constantFrom(...HOSTS)
  .chain((h) =>
    fc
      .array(fc.boolean(), { minLength: h.length, maxLength: h.length })
      .map((upper) => [...h].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join('')),
  );
const host = fc.oneof(
  trustedHost,
  fc
    .tuple(fc.array(fc.constantFrom(...LABELS), { minLength: 1, maxLength: 4 }), fc.boolean())
    .map(([labels, trailingDot]) => `${labels.join('.')}${trailingDot ? '.' : ''}`),
  trustedHost.map((h) => `evil${h}`),
  trustedHost.map((h) => `docs.${h}`),
  trustedHost.map((h) => `${h}.evil.example`),
  trustedHost.map((h) => `${h}.`),
);
const userInfo = fc.constantFrom('', 'eve@', 'github.com@', 'eve:pw@', 'gitlab.example.com@');
const pullRequestPath = fc.constantFrom(
  '/acme/docs/pull/7',
  '/writers/docs/-/merge_requests/12',
  '/acme/docs/pull-requests/3',
);

describe('the pull request host check, against an oracle of its own', () => {
  it('links exactly the trusted hosts, in any case, and no look-alike', () => {
    fc.assert(
      fc.property(host, userInfo, pullRequestPath, (h, user, path) => {
        const url = `https://${user}${h}${path}`;
        const trusted = user === '' && HOSTS.includes(h.toLowerCase());
        expect(checkPullRequestUrl(url, HOSTS)).toBe(trusted ? url : undefined);
        expect(checkUrl(url, HOSTS)).toBe(trusted ? url : undefined);
      }),
      { numRuns: 1_000 },
    );
  });

  it('finds the trusted hosts among the generated ones (the property above is not vacuous)', () => {
    const samples = fc.sample(fc.tuple(host, userInfo), { numRuns: 2_000, seed: 23 });
    const trusted = samples.filter(([h, user]) => user === '' && HOSTS.includes(h.toLowerCase()));
    expect(trusted.length).toBeGreaterThan(20);
    expect(trusted.length).toBeLessThan(1_000);
  });
});

const WORKSPACE = 'https://example-test.slack.com/';

describe('permalink', () => {
  it('links a message from the workspace address, with or without its final slash', () => {
    const link = 'https://example-test.slack.com/archives/C0DOCS/p1700000100000100';
    expect(permalink(WORKSPACE, 'C0DOCS', '1700000100.000100')).toBe(link);
    expect(permalink(WORKSPACE.slice(0, -1), 'C0DOCS', '1700000100.000100')).toBe(link);
  });

  it('names the thread of a reply, and not of a thread’s root', () => {
    expect(permalink(WORKSPACE, 'C0DOCS', '1700000200.000200', '1700000100.000100')).toBe(
      'https://example-test.slack.com/archives/C0DOCS/p1700000200000200?thread_ts=1700000100.000100&cid=C0DOCS',
    );
    expect(permalink(WORKSPACE, 'C0DOCS', '1700000100.000100', '1700000100.000100')).not.toContain(
      'thread_ts',
    );
  });

  it('gives nothing while the workspace address is not known', () => {
    expect(permalink(undefined, 'C0DOCS', '1700000100.000100')).toBeUndefined();
  });
});
