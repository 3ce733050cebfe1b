import { describe, expect, it } from 'vitest';
import { commandText, usage } from '../../../src/features/command/wording.js';
import { HINTS } from '../../helpers/rendering.js';

/** Entities Slack would act on: a mention, a broadcast, a link. */
const ENTITY = /<[@!#h]/;

/** The help with this deployment's defaults. */
const DEFAULT_USAGE = usage({ mode: 'all', asideMarker: '//', prLinkHosts: [] });

describe('usage', () => {
  it('lists every way in, with the follow-up rule of the deployment', () => {
    const guide = usage({ ...HINTS, mode: 'mention' });
    for (const way of [
      '`/docs-agent &lt;instruction&gt;`',
      '`@docs-agent &lt;instruction&gt;`',
      '*Send to docs agent*',
    ]) {
      expect(guide).toContain(way);
    }
    expect(guide).toContain('Mention @docs-agent in a job’s thread');
    expect(DEFAULT_USAGE).toContain('Reply in a job’s thread');
    expect(DEFAULT_USAGE).toContain('Start a reply with `//` to keep it from the agent.');
    expect(guide).toContain('The status card at the top of the thread shows progress');
    expect(guide).toContain(
      '`/docs-agent list` your recent jobs · `/docs-agent list channel` this channel’s',
    );
    expect(guide).not.toMatch(ENTITY);
  });

  it('ends with the subcommands, from their table, then help', () => {
    expect(DEFAULT_USAGE.split('\n').at(-1)).toBe(
      '• `/docs-agent list` your recent jobs · `/docs-agent list channel` this channel’s · `/docs-agent status` quota and health · `/docs-agent help` this message.',
    );
  });
});

describe('commandText', () => {
  it('says in every note without arguments what did not happen, mentioning nobody', () => {
    const said: Record<string, string> = {
      notUnderstood: 'I could not read that command',
      reportUnavailable: 'I could not read my records',
      directMessage: 'Nothing was started.',
    };
    for (const [name, words] of Object.entries(said)) {
      const note = (commandText[name as keyof typeof commandText] as () => string)();
      expect(note, name).toContain(words);
      expect(note, name).not.toMatch(ENTITY);
    }
  });

  it('quotes an unknown subcommand inert and shortened, then the help', () => {
    const said = commandText.unknownSubcommand(`<!channel>${'x'.repeat(200)}`, DEFAULT_USAGE);
    const [, word] = /^:information_source: `([^`]*)`/.exec(said) ?? [];
    expect(word?.startsWith('&lt;!channel&gt;')).toBe(true);
    expect(said).toContain('is not a /docs-agent subcommand, so nothing was started.\n*docs-agent* runs');
    expect(said).not.toContain('<!channel>');
  });
});
