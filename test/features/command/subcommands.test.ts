import { describe, expect, it } from 'vitest';
import type { Command } from '../../../src/features/command/listener.js';
import { type AnswerDeps, parseCommandText, SUBCOMMANDS } from '../../../src/features/command/subcommands.js';
import { codeSpan } from '../../../src/slack/mrkdwn.js';

/** Which jobs a `list` asks the store for: the person's (`mine`) or the channel's. */
async function listScope(raw: string) {
  const asked = parseCommandText(raw);
  if (asked.kind !== 'subcommand' || asked.name !== 'list') throw new Error(`${raw} is not a list`);
  let filter: object | undefined;
  const deps = {
    store: {
      recentJobs: async (f: object) => {
        filter = f;
        return [];
      },
    },
    identity: { peek: () => undefined },
    hints: { prLinkHosts: [] },
  } as unknown as AnswerDeps;
  await asked.answer(deps, { user_id: 'U0ME', channel_id: 'C0HERE' } as Command);
  return filter && 'requesterId' in filter ? 'mine' : 'channel';
}

describe('parseCommandText', () => {
  it('reads help from nothing or a help word', () => {
    for (const raw of ['', '  ', 'help', 'HELP', '-h', '--help', '?'])
      expect(parseCommandText(raw)).toEqual({ kind: 'help' });
  });

  it('reads a list of mine or of the channel', async () => {
    expect(await listScope('list')).toBe('mine');
    expect(await listScope('List me')).toBe('mine');
    expect(await listScope('list here')).toBe('channel');
    expect(await listScope('list channel')).toBe('channel');
    expect(parseCommandText('list everything')).toEqual({
      kind: 'unknown_subcommand',
      word: 'list everything',
    });
  });

  it('reads status, and a lone subcommand-like word as unknown', () => {
    expect(parseCommandText(' Status ')).toEqual({
      kind: 'subcommand',
      name: 'status',
      answer: expect.any(Function),
    });
    expect(parseCommandText('cancel')).toEqual({ kind: 'unknown_subcommand', word: 'cancel' });
    expect(parseCommandText('--verbose')).toEqual({ kind: 'unknown_subcommand', word: '--verbose' });
  });

  it('reads anything else as an instruction, one word included', () => {
    expect(parseCommandText('Proofread')).toEqual({ kind: 'instruction', text: 'Proofread' });
    expect(parseCommandText('  list the deprecated flags in the CLI page ')).toEqual({
      kind: 'instruction',
      text: 'list the deprecated flags in the CLI page',
    });
    expect(parseCommandText('status of the docs')).toEqual({
      kind: 'instruction',
      text: 'status of the docs',
    });
  });

  it('reads only the subcommands of its table, not the names every object has', () => {
    for (const raw of ['constructor', 'toString', 'hasOwnProperty'])
      expect(parseCommandText(raw)).toEqual({ kind: 'instruction', text: raw });
  });
});

describe('SUBCOMMANDS', () => {
  it('gives each subcommand help that names it, as its words are typed', () => {
    for (const [name, { help }] of Object.entries(SUBCOMMANDS)) {
      expect(help.length, name).toBeGreaterThan(0);
      for (const line of help)
        expect(line.startsWith(codeSpan(`/docs-agent ${name}`).slice(0, -1)), line).toBe(true);
    }
  });
});
