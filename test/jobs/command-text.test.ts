import { describe, expect, it } from 'vitest';
import { parseCommandText } from '../../src/jobs/command-text.js';

describe('parseCommandText', () => {
  it('reads help from nothing or a help word', () => {
    for (const raw of ['', '  ', 'help', 'HELP', '-h', '--help', '?'])
      expect(parseCommandText(raw)).toEqual({ kind: 'help' });
  });

  it('reads a list of mine or of the channel', () => {
    expect(parseCommandText('list')).toEqual({ kind: 'list', scope: 'mine' });
    expect(parseCommandText('List me')).toEqual({ kind: 'list', scope: 'mine' });
    expect(parseCommandText('list here')).toEqual({ kind: 'list', scope: 'channel' });
    expect(parseCommandText('list everything')).toEqual({
      kind: 'unknown_subcommand',
      word: 'list everything',
    });
  });

  it('reads status, and a lone subcommand-like word as unknown', () => {
    expect(parseCommandText(' Status ')).toEqual({ kind: 'status' });
    expect(parseCommandText('cancel')).toEqual({ kind: 'unknown_subcommand', word: 'cancel' });
    expect(parseCommandText('--verbose')).toEqual({ kind: 'unknown_subcommand', word: '--verbose' });
  });

  it('reads anything else as an instruction, one word included', () => {
    expect(parseCommandText('Proofread')).toEqual({ kind: 'instruction', text: 'Proofread' });
    expect(parseCommandText('  list the deprecated flags in the CLI page ')).toEqual({
      kind: 'instruction',
      text: 'list the deprecated flags in the CLI page',
    });
  });
});
