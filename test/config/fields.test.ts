import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { readConfig } from '../../src/config/config.js';
import {
  blankToUndefined,
  idList,
  integer,
  notifyChannelFor,
  optionalSecret,
  secret,
  serviceUrl,
} from '../../src/config/fields.js';
import { problemsOf, VALID_ENV } from '../helpers/config.js';

/** What a field reads `value` as, or the messages of its problems. */
function read(field: z.ZodType, value: unknown): { value: unknown } | { problems: string[] } {
  const result = field.safeParse(value);
  return result.success ? { value: result.data } : { problems: result.error.issues.map((i) => i.message) };
}
/** Everything a failed read says, issues whole, to look for a leaked value. */
const everythingSaid = (field: z.ZodType, value: unknown) => JSON.stringify(field.safeParse(value).error);

describe('blankToUndefined', () => {
  it('makes blank strings unset and leaves everything else', () => {
    expect(blankToUndefined('')).toBeUndefined();
    expect(blankToUndefined(' \t\n')).toBeUndefined();
    expect(blankToUndefined(' x ')).toBe(' x ');
    expect(blankToUndefined(0)).toBe(0);
    expect(blankToUndefined(undefined)).toBeUndefined();
  });
});

describe('secret', () => {
  const token = secret('xoxb-', 'the bot token');

  it('takes a value with its prefix as it is', () => {
    expect(read(token, 'xoxb-test-not-real')).toEqual({ value: 'xoxb-test-not-real' });
  });

  it('is required, a blank value included', () => {
    expect(read(token, undefined)).toEqual({ problems: ['is required (the bot token)'] });
    expect(read(token, '   ')).toEqual({ problems: ['is required (the bot token)'] });
  });

  it('names the prefix it expects and never echoes the value', () => {
    const wrong = 'xoxp-not-a-real-secret-value';
    expect(read(token, wrong)).toEqual({ problems: ['must start with "xoxb-" (the bot token)'] });
    expect(everythingSaid(token, wrong)).not.toContain('not-a-real-secret');
  });
});

describe('optionalSecret', () => {
  const appToken = optionalSecret('xapp-', 'an app-level token');

  it('may be unset or blank', () => {
    expect(read(appToken, undefined)).toEqual({ value: undefined });
    expect(read(appToken, '')).toEqual({ value: undefined });
    expect(read(appToken, 'xapp-test')).toEqual({ value: 'xapp-test' });
  });

  it('checks the prefix when set, without echoing the value', () => {
    expect(read(appToken, 'xoxb-not-a-real-secret')).toEqual({
      problems: ['must start with "xapp-" (an app-level token)'],
    });
    expect(everythingSaid(appToken, 'xoxb-not-a-real-secret')).not.toContain('not-a-real-secret');
  });
});

describe('serviceUrl', () => {
  const url = serviceUrl('https://api.example.com');
  const HTTPS_ONLY =
    'must use https: the bot sends its credentials there (plain http is allowed only to a loopback address: localhost, 127.0.0.0/8, [::1])';

  it('defaults when unset or blank', () => {
    expect(read(url, undefined)).toEqual({ value: 'https://api.example.com' });
    expect(read(url, ' ')).toEqual({ value: 'https://api.example.com' });
  });

  it('takes https anywhere and plain http only on this machine', () => {
    for (const ok of [
      'https://proxy.internal:8443/api/',
      'http://localhost:3000',
      'http://127.0.0.2/',
      'http://127.10.200.30/',
      'http://[::1]:9/',
    ])
      expect(read(url, ok)).toEqual({ value: ok });
    for (const far of [
      'http://10.0.0.1/',
      'http://localhost.evil.example/',
      'http://127.0.0.1.nip.io/',
      'http://[::ffff:7f00:1]/',
    ])
      expect(read(url, far), far).toEqual({ problems: [HTTPS_ONLY] });
  });

  it('refuses anything that is not an http(s) URL', () => {
    for (const bad of ['api.example.com', 'ftp://127.0.0.1/', 'file:///etc/passwd', 'javascript:alert(1)'])
      expect(read(url, bad), bad).toEqual({ problems: ['must be an http(s) URL'] });
  });
});

describe('integer', () => {
  const port = integer(3000, 0, 65_535, 'a TCP port');

  it('defaults when unset or blank, and reads a number written as text', () => {
    expect(read(port, undefined)).toEqual({ value: 3000 });
    expect(read(port, '')).toEqual({ value: 3000 });
    expect(read(port, ' 8080 ')).toEqual({ value: 8080 });
    expect(read(port, '0')).toEqual({ value: 0 });
    expect(read(port, '65535')).toEqual({ value: 65_535 });
  });

  it('names the bound crossed, or that it is no whole number, with the unit', () => {
    expect(read(port, '65536')).toEqual({ problems: ['must be at most 65535 (a TCP port)'] });
    expect(read(port, '-1')).toEqual({ problems: ['must be at least 0 (a TCP port)'] });
    expect(read(port, '80.5')).toEqual({ problems: ['must be a whole number (a TCP port)'] });
    expect(read(port, 'eighty')).toEqual({ problems: ['must be a whole number (a TCP port)'] });
  });
});

describe('idList', () => {
  const channels = idList('channel ids such as C0123ABCD');

  it('is empty (no restriction) when unset or blank', () => {
    expect(read(channels, undefined)).toEqual({ value: [] });
    expect(read(channels, ' ')).toEqual({ value: [] });
  });

  it('reads comma-separated ids, trimmed, skipping empty entries', () => {
    expect(read(channels, ' C0AAA , C0BBB,,')).toEqual({ value: ['C0AAA', 'C0BBB'] });
  });

  it('holds each id to the pattern given: people only, for a list of people', () => {
    const people = idList('user ids such as U0123ABCD', /^[UW][A-Z0-9]+$/);
    expect(read(people, 'U0ALICE, W0GRIDUSER')).toEqual({ value: ['U0ALICE', 'W0GRIDUSER'] });
    for (const bad of ['C0DOCS', 'B0BOT', 'U0ALICE,S0GROUP', 'u0lower'])
      expect(read(people, bad), bad).toEqual({
        problems: ['must be a comma-separated list of user ids such as U0123ABCD'],
      });
  });

  it('refuses anything that is not an id, naming what it expects', () => {
    for (const bad of ['#general', 'c0lower', 'C0AAA;C0BBB', 'C0AAA C0BBB'])
      expect(read(channels, bad), bad).toEqual({
        problems: ['must be a comma-separated list of channel ids such as C0123ABCD'],
      });
  });
});

const valid = { ...VALID_ENV, CHANNEL_PROJECTS: 'C0API:api-docs,C0SDK:sdk-docs' };

describe('NOTIFY_CHANNEL_ID, NOTIFY_ON, NOTIFY_REQUESTER, NOTIFY_PRIVATE_JOBS', () => {
  it('default to no notification channel, pull requests only, the thread only, and private words kept', () => {
    const config = readConfig(valid);
    expect(config.notify.on).toBe('pr');
    expect(config.notify.requester).toBe('thread');
    expect(config.notify.privateJobs).toBe('outcome-only');
    expect(notifyChannelFor(config.notify.channels, 'proj_test')).toBeUndefined();
    expect(notifyChannelFor(config.notify.channels, 'api-docs')).toBeUndefined();
  });

  it('take one channel for every project', () => {
    const config = readConfig({
      ...valid,
      NOTIFY_CHANNEL_ID: ' C0NOTIFY ',
      NOTIFY_ON: 'ALL',
      NOTIFY_REQUESTER: 'dm',
      NOTIFY_PRIVATE_JOBS: ' Quote ',
    });
    expect(config.notify.on).toBe('all');
    expect(config.notify.requester).toBe('dm');
    expect(config.notify.privateJobs).toBe('quote');
    for (const project of ['proj_test', 'api-docs', 'sdk-docs'])
      expect(notifyChannelFor(config.notify.channels, project)).toBe('C0NOTIFY');
  });

  it('take channels per project, with or without one for the others', () => {
    const some = readConfig({ ...valid, NOTIFY_CHANNEL_ID: 'C0APINEWS:api-docs, G0SDKNEWS : sdk-docs' });
    expect(notifyChannelFor(some.notify.channels, 'api-docs')).toBe('C0APINEWS');
    expect(notifyChannelFor(some.notify.channels, 'sdk-docs')).toBe('G0SDKNEWS');
    expect(notifyChannelFor(some.notify.channels, 'proj_test')).toBeUndefined();
    const all = readConfig({ ...valid, NOTIFY_CHANNEL_ID: 'C0APINEWS:api-docs,C0NOTIFY' });
    expect(notifyChannelFor(all.notify.channels, 'api-docs')).toBe('C0APINEWS');
    expect(notifyChannelFor(all.notify.channels, 'sdk-docs')).toBe('C0NOTIFY');
  });

  it('name every malformed value at start-up', () => {
    const syntax =
      'NOTIFY_CHANNEL_ID must be a channel id (C0123ABCD) for every project, and/or channel:project pairs for single projects, comma-separated, such as C0123ABCD,C0456EFGH:sdk-docs';
    for (const bad of ['#docs', 'D0DIRECT', 'U0ALICE', 'api-docs:C0API', 'C0A:api-docs:x', 'C0A:', 'c0lower'])
      expect(problemsOf({ ...valid, NOTIFY_CHANNEL_ID: bad }), bad).toEqual([syntax]);
    expect(problemsOf({ ...valid, NOTIFY_CHANNEL_ID: 'C0ONE,C0TWO' })).toEqual([
      'NOTIFY_CHANNEL_ID names more than one channel for every project',
    ]);
    expect(problemsOf({ ...valid, NOTIFY_CHANNEL_ID: 'C0ONE:api-docs,C0TWO:api-docs' })).toEqual([
      'NOTIFY_CHANNEL_ID lists a project twice',
    ]);
    expect(
      problemsOf({ ...valid, NOTIFY_ON: 'some', NOTIFY_REQUESTER: 'email', NOTIFY_PRIVATE_JOBS: 'all' }),
    ).toEqual([
      'NOTIFY_ON must be pr or all',
      'NOTIFY_REQUESTER must be thread or dm',
      'NOTIFY_PRIVATE_JOBS must be outcome-only or quote',
    ]);
  });

  it('refuse a project no channel runs on (a typo would silence its notifications)', () => {
    expect(problemsOf({ ...valid, NOTIFY_CHANNEL_ID: 'C0NEWS:api-dcos' })).toEqual([
      'NOTIFY_CHANNEL_ID names project "api-dcos", which is neither DOCS_AGENT_PROJECT_ID nor a project of CHANNEL_PROJECTS',
    ]);
    expect(
      readConfig({ ...valid, NOTIFY_CHANNEL_ID: 'C0NEWS:proj_test' }).notify.channels.byProject.size,
    ).toBe(1);
  });
});
