import { describe, expect, it } from 'vitest';
import { readConfig } from '../../src/config/config.js';
import { problemsOf, VALID_ENV } from '../helpers/config.js';

describe('direct messages and the assistant pane in the configuration', () => {
  it('reads ALLOW_DIRECT_MESSAGES as unset, true or false', () => {
    expect(readConfig(VALID_ENV).access.allowDirectMessages).toBeUndefined();
    expect(readConfig({ ...VALID_ENV, ALLOW_DIRECT_MESSAGES: 'yes' }).access.allowDirectMessages).toBe(true);
    expect(readConfig({ ...VALID_ENV, ALLOW_DIRECT_MESSAGES: 'FALSE' }).access.allowDirectMessages).toBe(
      false,
    );
    expect(problemsOf({ ...VALID_ENV, ALLOW_DIRECT_MESSAGES: 'sometimes' })).toEqual([
      'ALLOW_DIRECT_MESSAGES must be true or false',
    ]);
  });

  it('reads SUGGESTED_PROMPTS as titled or plain prompts, with defaults, and none when empty', () => {
    expect(readConfig(VALID_ENV).suggestedPrompts.map((p) => p.title)).toEqual([
      'Document a feature',
      'Fix a page',
      'Add an FAQ entry',
    ]);
    expect(
      readConfig({ ...VALID_ENV, SUGGESTED_PROMPTS: 'Tidy up|Tidy the headings ; Fix typos' })
        .suggestedPrompts,
    ).toEqual([
      { title: 'Tidy up', message: 'Tidy the headings' },
      { title: 'Fix typos', message: 'Fix typos' },
    ]);
    expect(readConfig({ ...VALID_ENV, SUGGESTED_PROMPTS: '' }).suggestedPrompts).toEqual([]);
    expect(problemsOf({ ...VALID_ENV, SUGGESTED_PROMPTS: 'a;b;c;d;e' })[0]).toContain('at most 4 prompts');
    expect(problemsOf({ ...VALID_ENV, SUGGESTED_PROMPTS: 'Title only|' })[0]).toContain('"title|message"');
  });
});
