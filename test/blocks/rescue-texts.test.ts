import { describe, expect, it } from 'vitest';
import { rescueIntro } from '../../src/blocks/rescue-texts.js';

describe('rescueIntro', () => {
  it("names the job's channel as a link and what Slack said", () => {
    expect(rescueIntro('C0DOCS', 'channel_not_found')).toBe(
      ":information_source: I could not post in the job's thread in <#C0DOCS> (Slack said `channel_not_found`), so here it is directly:",
    );
  });

  it('shows what is not a channel id as inert text, never as a mention or a link', () => {
    const intro = rescueIntro('<!channel>', '<@U0EVE> `x`');
    expect(intro).toContain('in &lt;!channel&gt; (Slack said');
    expect(intro).toContain("`&lt;@U0EVE&gt; 'x'`");
    expect(intro).not.toMatch(/<[!@]/);
    // A user id is not a conversation: it is not linked either.
    expect(rescueIntro('U0EVE', 'is_archived')).toContain('in U0EVE (');
  });
});
