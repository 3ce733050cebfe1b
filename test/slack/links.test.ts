import { describe, expect, it } from 'vitest';
import { checkPullRequestUrl, checkUrl } from '../../src/slack/links.js';

const HOSTS = ['github.com', 'gitlab.example.com', 'bitbucket.org'];

describe('addresses the bot makes clickable', () => {
  it.each([
    'https://github.com/acme/docs/pull/7',
    'https://github.com/acme/docs/pull/7/',
    'https://gitlab.example.com/writers/docs/-/merge_requests/12',
    'https://bitbucket.org/acme/docs/pull-requests/3',
  ])('links the pull request %s', (url) => {
    expect(checkPullRequestUrl(url, HOSTS)).toBe(url);
  });

  it.each([
    ['another host', 'https://phish.example/acme/docs/pull/7'],
    ['a look-alike host', 'https://github.com.phish.example/acme/docs/pull/7'],
    ['credentials before the host', 'https://github.com@phish.example/acme/docs/pull/7'],
    ['plain http', 'http://github.com/acme/docs/pull/7'],
    ['a sign-in page of a trusted host', 'https://github.com/login/oauth/authorize?client_id=x'],
    ['a settings page', 'https://github.com/acme/docs/settings'],
    ['Slack link syntax', 'https://github.com/acme/docs/pull/7|Totally safe'],
    ['a closing bracket', 'https://github.com/acme/docs/pull/7><!channel>'],
    ['white space', 'https://github.com/acme/docs/pull/7 extra'],
    ['a control character', 'https://github.com/acme/docs/pull/7\u0000'],
    ['more than a button holds', `https://github.com/acme/docs/pull/7?${'q'.repeat(3_000)}`],
    ['no address', ''],
  ])('refuses %s', (_what, url) => {
    expect(checkPullRequestUrl(url, HOSTS)).toBeUndefined();
  });

  it('checks any address for the link syntax and https, without a host list', () => {
    expect(checkUrl('https://acme.slack.com/archives/C1/p1?thread_ts=1.2&cid=C1')).toBeDefined();
    expect(checkUrl('javascript:alert(1)')).toBeUndefined();
    expect(checkUrl('https://acme.slack.com/a|b')).toBeUndefined();
  });
});
