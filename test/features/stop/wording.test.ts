import { describe, expect, it } from 'vitest';
import { stopText, type Withdrawn } from '../../../src/features/stop/wording.js';

const reply = (authorId: string): Withdrawn => ({ kind: 'follow_up', authorId });

describe('stopText.stopped', () => {
  it('names who pressed stop, and never claims to have stopped a running agent', () => {
    expect(stopText.stopped({ by: 'U0ALICE', withdrawn: [], running: true })).toBe(
      ':octagonal_sign: <@U0ALICE> pressed stop. Nothing was waiting to be withdrawn. The agent already has the instruction it is working on and cannot be interrupted: it will finish, and its outcome will still be posted in this thread.',
    );
    expect(stopText.stopped({ by: 'U0ALICE', withdrawn: [], running: false })).toBe(
      ':octagonal_sign: <@U0ALICE> pressed stop. Nothing was waiting to be withdrawn. Nothing else was running.',
    );
  });

  it('lists what was withdrawn: the first instruction, and replies by their authors', () => {
    const said = stopText.stopped({
      by: 'U0ALICE',
      withdrawn: [{ kind: 'create', authorId: 'U0ALICE' }, reply('U0BOB')],
      running: false,
    });
    expect(said).toContain(
      'Withdrawn before it reached the docs agent: the first instruction, a reply from <@U0BOB>.',
    );
  });

  it('names five and counts the rest', () => {
    const withdrawn = Array.from({ length: 7 }, (_, i) => reply(`U0P${i}`));
    const said = stopText.stopped({ by: 'U0ALICE', withdrawn, running: true });
    expect(said).toContain('a reply from <@U0P4>, 2 more.');
    expect(said).not.toContain('U0P5');
    expect(said).toContain('cannot be interrupted');
  });

  it('mentions nobody through an id that is not a person’s', () => {
    const said = stopText.stopped({
      by: '<!channel>',
      withdrawn: [reply('<!here>'), reply('S0TEAM')],
      running: false,
    });
    expect(said).toContain('&lt;!channel&gt; pressed stop');
    expect(said).toContain('a reply from &lt;!here&gt;, a reply from S0TEAM.');
    expect(said).not.toMatch(/<[!@]/);
  });
});

describe('stopText', () => {
  it('tells whoever may not stop the job who may, and that nothing was stopped', () => {
    expect(stopText.notYours('U0ALICE')).toBe(
      ':no_entry: Only <@U0ALICE>, who asked for this job, or someone who may instruct the docs agent here can stop it. Nothing was stopped.',
    );
    expect(stopText.notYours('<!everyone>')).not.toContain('<!everyone>');
  });

  it('says a stop that was not recorded may not hold', () => {
    expect(stopText.notRecorded()).toContain('what waits may still be sent to the docs agent');
  });
});
