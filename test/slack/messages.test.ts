import { describe, expect, it } from 'vitest';
import {
  authorTeam,
  botUserIdOf,
  followUpText,
  fromApp,
  isAside,
  isHumanMessage,
  mentionsUser,
  personMessage,
  sharedFiles,
} from '../../src/slack/messages.js';

describe('whether a message is a person’s own', () => {
  it('takes plain messages, "Also send to channel" replies and files with a comment', () => {
    expect(isHumanMessage({})).toBe(true);
    expect(isHumanMessage({ subtype: undefined })).toBe(true);
    expect(isHumanMessage({ subtype: 'thread_broadcast' })).toBe(true);
    expect(isHumanMessage({ subtype: 'file_share' })).toBe(true);
  });

  it('refuses edits, deletions, joins, topic changes and bot messages', () => {
    for (const subtype of [
      'message_changed',
      'message_deleted',
      'message_replied',
      'channel_join',
      'channel_leave',
      'channel_topic',
      'bot_message',
      'me_message',
      'assistant_app_thread',
    ])
      expect(isHumanMessage({ subtype }), subtype).toBe(false);
  });

  it('refuses subtypes it does not know, and ones that are not text', () => {
    for (const subtype of ['', 'File_Share', 'thread_broadcast ', null, 0, false, ['file_share']])
      expect(isHumanMessage({ subtype }), JSON.stringify(subtype)).toBe(false);
  });
});

describe('personMessage', () => {
  const plain = { user: 'U0ALICE', text: 'Document the CLI', ts: '1700000100.000100' };

  it('reads a person’s message, an absent text as empty', () => {
    expect(personMessage.parse(plain)).toMatchObject(plain);
    expect(personMessage.parse({ user: 'U0ALICE', ts: '1.2' }).text).toBe('');
  });

  it('reads an Enterprise Grid author (a W… user id) like any other', () => {
    expect(personMessage.safeParse({ ...plain, user: 'W0GRIDUSER' }).success).toBe(true);
  });

  it.each([
    ['an app’s message', { bot_id: 'B0OTHER' }],
    ['an app’s message that carries a user', { app_id: 'A0OTHER' }],
    ['a message with no author', { user: undefined }],
    ['a message with an empty author', { user: '' }],
    ['a message without a ts', { ts: undefined }],
    ['a text that is not a string', { text: 42 }],
    ['a thread_ts that is not a string', { thread_ts: 1700000100 }],
    ['an empty thread_ts', { thread_ts: '' }],
  ])('does not read %s', (_what, fields) => {
    expect(personMessage.safeParse({ ...plain, ...fields }).success).toBe(false);
  });
});

describe('botUserIdOf', () => {
  const body = (authorizations: unknown) => ({ authorizations });

  it('prefers what Bolt’s context knows', () => {
    expect(botUserIdOf({ botUserId: 'U0BOT' }, body([{ is_bot: true, user_id: 'U0OTHER' }]))).toBe('U0BOT');
  });

  it('before auth.test answered: reads the bot authorization the event was delivered for', () => {
    const auths = [
      { is_bot: false, user_id: 'U0PERSON' },
      { is_bot: true, user_id: 'U0BOT' },
    ];
    expect(botUserIdOf({}, body(auths))).toBe('U0BOT');
  });

  it.each([
    ['no authorizations', {}],
    ['only a person’s authorization', body([{ is_bot: false, user_id: 'U0PERSON' }])],
    ['a bot authorization without a user id', body([{ is_bot: true, user_id: 42 }])],
  ])('knows no bot user id with %s', (_what, envelope) => {
    expect(botUserIdOf({}, envelope)).toBeUndefined();
  });
});

describe('fromApp', () => {
  it('tells an app’s message by bot_id or app_id, and a person’s by neither', () => {
    expect(fromApp({ bot_id: 'B0OTHER' })).toBe(true);
    expect(fromApp({ app_id: 'A0OTHER', user: 'U0ALICE' })).toBe(true);
    expect(fromApp({ user: 'U0ALICE' })).toBe(false);
  });
});

describe('authorTeam', () => {
  const envelope = { team_id: 'T0HOST' };

  it('in a shared channel: the author’s own workspace (user_team, then source_team)', () => {
    expect(authorTeam({ user_team: 'T0GUEST', source_team: 'T0OTHER' }, envelope)).toBe('T0GUEST');
    expect(authorTeam({ source_team: 'T0OTHER' }, envelope)).toBe('T0OTHER');
  });

  it('falls back to the workspace the event came through when the event does not say', () => {
    expect(authorTeam({}, envelope)).toBe('T0HOST');
    expect(authorTeam({ user_team: '', source_team: null }, envelope)).toBe('T0HOST');
    expect(authorTeam({ user_team: 42 }, {})).toBeUndefined();
  });
});

describe('sharedFiles', () => {
  it('names each file by name or title, and its type by filetype or mimetype', () => {
    expect(
      sharedFiles([
        { id: 'F1', name: 'spec.pdf', filetype: 'pdf', mimetype: 'application/pdf' },
        { id: 'F2', title: 'Screenshot', mimetype: 'image/png' },
        { id: 'F3' },
      ]),
    ).toEqual([
      { name: 'spec.pdf', type: 'pdf' },
      { name: 'Screenshot', type: 'image/png' },
      { name: 'unnamed', type: 'unknown type' },
    ]);
  });

  it.each([
    ['no files', undefined],
    ['files that are not a list', { name: 'spec.pdf' }],
    ['a file whose name is not a string', [{ name: 42 }]],
    ['an entry that is not a file', ['spec.pdf']],
  ])('gives none for %s', (_what, files) => {
    expect(sharedFiles(files)).toEqual([]);
  });
});

const BOT = 'U0BOT';
const all = { botUserId: BOT, mode: 'all' as const, asideMarker: '//' };
const mention = { ...all, mode: 'mention' as const };

describe('mentions of a user', () => {
  it('finds a mention as Slack writes it, with or without a label', () => {
    expect(mentionsUser('<@U0BOT> fix the typo', BOT)).toBe(true);
    expect(mentionsUser('please <@U0BOT|docs-agent> fix it', BOT)).toBe(true);
    // Enterprise Grid users have W… ids.
    expect(mentionsUser('hi <@W0GRIDBOT|bot>', 'W0GRIDBOT')).toBe(true);
  });

  it('does not take look-alikes for a mention', () => {
    for (const text of [
      'U0BOT fix it',
      '@U0BOT fix it',
      '<@U0BOTTWIN> fix it',
      '<@u0bot> fix it',
      '<#U0BOT> fix it',
      '&lt;@U0BOT&gt; fix it',
      '<!channel> <!here> <!everyone>',
      '<!subteam^S0DOCS|@docs-team> please',
      '<@U0BOT fix it',
    ])
      expect(mentionsUser(text, BOT), text).toBe(false);
  });

  it('answers the same when asked again (no state kept between calls)', () => {
    expect([mentionsUser('<@U0BOT>', BOT), mentionsUser('<@U0BOT>', BOT), mentionsUser('x', BOT)]).toEqual([
      true,
      true,
      false,
    ]);
  });
});

describe('what a reply in a job’s thread asks of the agent', () => {
  it('is the text without the bot’s mentions, spaces tidied, lines kept', () => {
    expect(followUpText('<@U0BOT>  also fix   the <@U0BOT|docs> intro', all)).toBe('also fix the intro');
    expect(followUpText('<@U0BOT> first:\n- one\n- two', all)).toBe('first:\n- one\n- two');
  });

  it('keeps everything that is not the bot’s mention: other people, channels, groups', () => {
    const text =
      '<@U0BOT> ask <@U0ALICE|alice> in <#C0DOCS|docs>, cc <!subteam^S0DOCS|@docs-team> <!channel>';
    expect(followUpText(text, all)).toBe(
      'ask <@U0ALICE|alice> in <#C0DOCS|docs>, cc <!subteam^S0DOCS|@docs-team> <!channel>',
    );
  });

  it('does not let a label hide a second mention inside it', () => {
    // The label ends at the first `>`: what follows is text, not part of the bot’s mention.
    expect(followUpText('<@U0BOT|<@U0ALICE>> go', all)).toBe('> go');
  });

  it('in mention mode is only a reply that mentions the bot', () => {
    expect(followUpText('fix the intro', mention)).toBeUndefined();
    expect(followUpText('<@U0BOTTWIN> fix the intro', mention)).toBeUndefined();
    expect(followUpText('<!channel> fix the intro', mention)).toBeUndefined();
    expect(followUpText('fix the intro <@U0BOT>', mention)).toBe('fix the intro');
  });

  it('in mention mode is nothing while the bot’s own id is unknown', () => {
    expect(followUpText('<@U0BOT> fix the intro', { ...mention, botUserId: undefined })).toBeUndefined();
  });

  it('in all mode is the whole text while the bot’s own id is unknown', () => {
    expect(followUpText('<@U0BOT> fix the intro', { ...all, botUserId: undefined })).toBe(
      '<@U0BOT> fix the intro',
    );
  });

  it('is nothing for an aside, even after the bot’s mention', () => {
    expect(followUpText('// just chatting', all)).toBeUndefined();
    expect(followUpText('   // indented aside', all)).toBeUndefined();
    expect(followUpText('<@U0BOT> // note to self', mention)).toBeUndefined();
    expect(followUpText('see https://example.com // not an aside', all)).toBe(
      'see https://example.com // not an aside',
    );
  });

  it('takes every reply when asides are off', () => {
    expect(isAside('// anything', '')).toBe(false);
    expect(followUpText('// anything', { ...all, asideMarker: '' })).toBe('// anything');
  });

  it('is empty, not nothing, for a bare mention (the caller decides)', () => {
    expect(followUpText('<@U0BOT>', mention)).toBe('');
  });
});
