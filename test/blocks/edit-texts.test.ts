import { describe, expect, it } from 'vitest';
import { editText } from '../../src/blocks/edit-texts.js';

const file = (name: string, type = 'png') => ({ name, type });

describe('editText', () => {
  it('tells the person an edit or deletion came too late to reach the agent, and what to do instead', () => {
    expect(editText.editedLate()).toBe(
      ':pencil2: The docs agent already has the earlier version of your message, so this edit does not reach it. To change course, reply in the thread with what you want now.',
    );
    expect(editText.deletedLate()).toContain('deleting it does not take it back');
    expect(editText.deletedLate()).toContain('reply in the thread with what you want now');
    expect(editText.withdrawn()).toContain('will not be sent to the agent');
    expect(editText.notRecorded()).toContain('may still get the earlier version');
  });

  it('names the length of an overlong edit and the limit', () => {
    expect(editText.editTooLong(12_345, 10_000)).toBe(
      ':straight_ruler: Your edit is 12345 characters long; the limit is 10000. The earlier version is what the docs agent gets.',
    );
  });

  it('lists the unseen files by name in code spans', () => {
    expect(editText.filesUnseen([file('spec.pdf', 'pdf'), file('diagram.png')])).toBe(
      ':paperclip: Files do not reach the docs agent: it gets only their names and types (`spec.pdf`, `diagram.png`), with your text. Paste what it needs from them into your message.',
    );
  });

  it('names five files and counts the rest', () => {
    const files = Array.from({ length: 8 }, (_, i) => file(`f${i}.txt`));
    const note = editText.filesUnseen(files);
    expect(note).toContain('(`f0.txt`, `f1.txt`, `f2.txt`, `f3.txt`, `f4.txt`, 3 more)');
    expect(note).not.toContain('f5.txt');
    expect(editText.filesUnseen(files.slice(0, 5))).not.toContain('more');
  });

  it('shows hostile file names inert: no mention, no broadcast, no closing the code span', () => {
    const note = editText.filesUnseen([
      file('<!channel> & <@U0EVE>.png'),
      file('a`b`<https://phish.example|report>.pdf'),
      file('two\nlines.txt'),
    ]);
    expect(note).toContain('`&lt;!channel&gt; &amp; &lt;@U0EVE&gt;.png`');
    expect(note).toContain("`a'b'&lt;https://phish.example|report&gt;.pdf`");
    expect(note).toContain('`two lines.txt`');
    expect(note).not.toMatch(/<[!@#h]/);
  });

  it('shortens a long file name to 80 characters', () => {
    const note = editText.filesUnseen([file(`${'n'.repeat(200)}.pdf`)]);
    const [, name] = /\(`([^`]*)`\)/.exec(note) ?? [];
    expect(name).toHaveLength(80);
    expect(name?.endsWith('…')).toBe(true);
  });
});
