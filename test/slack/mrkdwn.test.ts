import fc from 'fast-check';
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

  it('escapes every `&`, `<` and `>`, and reads the escaped text back exactly', () => {
    const written = 'a < b && c >> d <!here> &lt; <<@U1|x>>';
    expect(escapeMrkdwn(written)).toBe(
      'a &lt; b &amp;&amp; c &gt;&gt; d &lt;!here&gt; &amp;lt; &lt;&lt;@U1|x&gt;&gt;',
    );
    expect(mrkdwnToPlain(escapeMrkdwn(written))).toBe(written);
  });

  it('reads back any escaped text exactly, and the escaped text holds no entity', () => {
    const piece = fc.oneof(
      fc.constantFrom('<', '>', '&', '&amp;', '&lt;', '&gt;', '<!here>', '|', '\n'),
      fc.string(),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 20 }), (pieces) => {
        const written = pieces.join('');
        const escaped = escapeMrkdwn(written);
        expect(escaped).not.toMatch(/[<>]/);
        expect(escaped).not.toMatch(/&(?!amp;|lt;|gt;)/);
        expect(mrkdwnToPlain(escaped)).toBe(written);
      }),
      { numRuns: 500 },
    );
  });
});

describe('slackDate', () => {
  it('says "later" for a time that is no time, instead of throwing', () => {
    expect(slackDate(new Date(Number.NaN), '{time}')).toBe('later');
    expect(slackDate(9e15, '{time}')).toBe('later');
    expect(slackDate(1_800_000_000_000, '{time}')).toBe('<!date^1800000000^{time}|08:00 UTC>');
  });
});
