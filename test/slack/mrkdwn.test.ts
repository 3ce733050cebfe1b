import { describe, expect, it } from 'vitest';
import { escapeMrkdwn, mrkdwnToPlain, slackDate } from '../../src/slack/mrkdwn.js';

describe('mrkdwnToPlain', () => {
  it.each([
    ['Fix &amp; polish &lt;Card&gt;', 'Fix & polish <Card>'],
    ['See <https://example.com/a|the guide>', 'See the guide (https://example.com/a)'],
    ['See <https://example.com/a>', 'See https://example.com/a'],
    ['Ask <@U123>', 'Ask @U123'],
    ['Ask <@U123|alice>', 'Ask @alice'],
    ['In <#C123|docs>', 'In #docs'],
    ['In <#C123|>', 'In #C123'],
    ['See <https://x.io|>', 'See https://x.io'],
    ['<!here> look', '@here look'],
    ['<!subteam^S1|@writers> review', '@writers review'],
    ['Mail <mailto:a@b.co|a@b.co>', 'Mail a@b.co'],
    ['&amp;lt; stays literal', '&lt; stays literal'],
    ['*bold* _it_ `code`', '*bold* _it_ `code`'],
  ])('%j → %j', (input, expected) => {
    expect(mrkdwnToPlain(input)).toBe(expected);
  });

  it('round-trips escaped text', () => {
    expect(mrkdwnToPlain(escapeMrkdwn('a < b & c > d'))).toBe('a < b & c > d');
  });
});

describe('slackDate', () => {
  it('says "later" for a time that is no time, instead of throwing', () => {
    expect(slackDate(new Date(Number.NaN), '{time}')).toBe('later');
    expect(slackDate(9e15, '{time}')).toBe('later');
    expect(slackDate(1_800_000_000_000, '{time}')).toBe('<!date^1800000000^{time}|08:00 UTC>');
  });
});
