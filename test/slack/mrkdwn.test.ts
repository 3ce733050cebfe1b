import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkUrl } from '../../src/slack/links.js';
import {
  blockQuote,
  channelMention,
  codeSpan,
  escapeMrkdwn,
  joinMrkdwn,
  link,
  md,
  mrkdwnToPlain,
  recordedMrkdwn,
  slackDate,
  truncateMrkdwn,
  truncateText,
  userMention,
} from '../../src/slack/mrkdwn.js';

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

describe('Slack tokens read as plain text', () => {
  it.each([
    ['<!subteam^S1>', '@group'],
    ['<!date^1800000000^{time}|08:00 UTC>', '08:00 UTC'],
    ['<!date^1800000000^{time}>', ''],
    ['<!channel>', '@channel'],
    ['<mailto:a@b.co>', 'a@b.co'],
    ['<https://x.io|https://x.io>', 'https://x.io'],
    ['<@U1|>', '@U1'],
  ])('%j → %j', (input, expected) => {
    expect(mrkdwnToPlain(input)).toBe(expected);
  });
});

describe('the builders', () => {
  it('md interpolates only what it is given, in place', () => {
    expect(md`a ${escapeMrkdwn('<b>')} c ${2} d`).toBe('a &lt;b&gt; c 2 d');
    expect(md`${3}`).toBe('3');
  });

  it('mentions a person or a conversation only by a well-formed id of its kind', () => {
    expect(userMention('U0ALICE')).toBe('<@U0ALICE>');
    expect(userMention('W0ALICE')).toBe('<@W0ALICE>');
    expect(userMention('C0DOCS')).toBe('C0DOCS');
    expect(userMention('u0alice')).toBe('u0alice');
    expect(userMention('U')).toBe('U');
    expect(userMention('U0ALICE><!here')).toBe('U0ALICE&gt;&lt;!here');
    expect(userMention('U1 <!here> ABC')).toBe('U1 &lt;!here&gt; ABC');
    expect(userMention('C0WU')).toBe('C0WU');
    expect(channelMention('C1 <!here> ABC')).toBe('C1 &lt;!here&gt; ABC');
    expect(channelMention('U0CGD')).toBe('U0CGD');
    expect(channelMention('C0DOCS')).toBe('<#C0DOCS>');
    expect(channelMention('G0PRIVATE')).toBe('<#G0PRIVATE>');
    expect(channelMention('D0DIRECT')).toBe('<#D0DIRECT>');
    expect(channelMention('U0ALICE')).toBe('U0ALICE');
    expect(channelMention('X0C')).toBe('X0C');
    expect(channelMention('C0<!here>')).toBe('C0&lt;!here&gt;');
  });

  it('writes a Slack date from a Date or epoch milliseconds, up to the largest Date', () => {
    expect(slackDate(new Date(1_800_000_000_000), '{date_short_pretty} at {time}')).toBe(
      '<!date^1800000000^{date_short_pretty} at {time}|08:00 UTC>',
    );
    // (The fallback text of a date past the year 9999 is not a time: see docs/testing.md.)
    expect(slackDate(8.64e15, '{time}')).toMatch(/^<!date\^8640000000000\^\{time\}\|/);
    expect(slackDate(-8.64e15, '{time}')).toMatch(/^<!date\^-8640000000000\^\{time\}\|/);
    expect(slackDate(8.64e15 + 1, '{time}')).toBe('later');
  });

  it('puts text in a code span that a backtick or a line break cannot end', () => {
    expect(codeSpan('a`b\nc\rd <e>')).toBe("`a'b c d &lt;e&gt;`");
  });

  it('links a checked address with an escaped label that cannot end the link', () => {
    const url = checkUrl('https://x.io/a?b=1&c=2');
    if (!url) throw new Error('a plain https address is linkable');
    expect(link(url, 'a|b <c> & d')).toBe('<https://x.io/a?b=1&amp;c=2|a/b &lt;c&gt; &amp; d>');
  });

  it('joins, shortens and quotes mrkdwn', () => {
    expect(joinMrkdwn([md`a`, md`b`])).toBe('a\nb');
    expect(joinMrkdwn([md`a`, md`b`], md` · `)).toBe('a · b');
    expect(truncateMrkdwn(md`abcdefghij`, 5)).toHaveLength(5);
    expect(blockQuote(md`one\ntwo`)).toBe('>one\n>two');
    expect(recordedMrkdwn('<@U1> said')).toBe('<@U1> said');
  });
});

describe('truncateText', () => {
  it('leaves short text alone and cuts long text to the limit with an ellipsis', () => {
    expect(truncateText('short', 10)).toBe('short');
    const cut = truncateText('a'.repeat(50), 10);
    expect(cut).toBe(`${'a'.repeat(9)}…`);
    expect(cut.length).toBe(10);
  });

  it('never cuts inside a link, mention or channel entity', () => {
    const text = 'See <https://docs.example.com/quickstart|the quickstart> now';
    for (let max = 5; max < text.length; max++) {
      const cut = truncateText(text, max);
      expect(cut.length).toBeLessThanOrEqual(max);
      const body = cut.slice(0, -1);
      expect(body.split('<').length, cut).toBe(body.split('>').length);
    }
    expect(truncateText('Ask <@U0123ABCD> about it', 12)).toBe('Ask…');
  });

  it('never cuts inside an escape, an emoji code or a surrogate pair', () => {
    expect(truncateText('Tom &amp; Jerry', 8)).toBe('Tom…');
    expect(truncateText('Done :white_check_mark: ok', 12)).toBe('Done…');
    const cut = truncateText('ab😀cd', 4);
    expect(cut).toBe('ab…');
    expect(cut.length).toBeLessThanOrEqual(4);
  });

  // Each unit is kept whole only while the cut falls inside it: one that ends before the cut, or
  // starts after it, changes nothing.
  it.each([
    ['exactly 10', 10, 'exactly 10'],
    ['Ping<@U0123ABCD>', 4, 'Pin…'],
    ['Ask <@U0123ABCD> about it', 20, 'Ask <@U0123ABCD> ab…'],
    ['ab;cdefgh', 3, 'ab…'],
    ['Tom &amp; Jerry', 10, 'Tom &amp;…'],
    ['Tom &amp; Jerry', 9, 'Tom…'],
    ['R&D team; more', 5, 'R&D…'],
    ['Say &quot;hi&quot;', 8, 'Say…'],
    ['Hi :x: see :white_check_mark: ok', 15, 'Hi :x: see…'],
    ['Done :white_check_mark: and then a long tail of words here', 12, 'Done…'],
    ['Note:this is long: yes', 8, 'Note:th…'],
    ['ab\u{10000}cd', 4, 'ab…'],
    ['ab\u{10FFFF}cd', 4, 'ab…'],
    ['abｆcd', 4, 'abｆ…'],
  ])('cuts %j to %i characters as %j', (text, max, expected) => {
    expect(truncateText(text, max)).toBe(expected);
  });
});
