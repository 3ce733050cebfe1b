import { describe, expect, it } from 'vitest';
import { truncateText } from '../../src/slack/truncate.js';

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
});
