import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  blankToUndefined,
  idList,
  integer,
  optionalSecret,
  secret,
  serviceUrl,
} from '../../src/config/fields.js';

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
