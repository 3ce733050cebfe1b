import { describe, expect, it } from 'vitest';
import {
  clickersTeam,
  clickSchema,
  isDirectConversation,
  isDirectMessage,
  isEnterpriseId,
  isPrivateConversation,
  isTeamId,
  isUserId,
  privateByChannelName,
  SLACK_ID,
  userIdSchema,
} from '../../src/slack/ids.js';

describe('Slack ids', () => {
  it('takes a person’s id, of a workspace or of an organisation', () => {
    expect(isUserId('U0ALICE')).toBe(true);
    expect(isUserId('W0GRID')).toBe(true);
  });

  it('takes nothing else for a person', () => {
    for (const id of ['C0DOCS', 'B0BOT', 'u0alice', 'U', 'U0 ALICE', 'docs-bot', ''])
      expect(isUserId(id), id).toBe(false);
  });

  it('reads only upper-case letters and digits as an id', () => {
    expect(SLACK_ID.test('C0DOCS')).toBe(true);
    expect(SLACK_ID.test('C0DOCS>')).toBe(false);
    expect(SLACK_ID.test('A'.repeat(41))).toBe(false);
  });

  it('parses a person’s id in a payload by the same rule, naming no value when it fails', () => {
    expect(userIdSchema.parse('W0GRID')).toBe('W0GRID');
    const failed = userIdSchema.safeParse('<!channel>');
    expect(failed.success).toBe(false);
    expect(JSON.stringify(failed.error?.issues)).not.toContain('<!channel>');
  });
});

describe('workspace and organisation ids', () => {
  it('tells a workspace’s T… id from an organisation’s E… id', () => {
    expect(isTeamId('T0TEST')).toBe(true);
    expect(isEnterpriseId('E0ACME')).toBe(true);
    for (const id of ['E0ACME', 'U0ALICE', 't0test', 'T', 'T0 TEST', ''])
      expect(isTeamId(id), id).toBe(false);
    for (const id of ['T0TEST', 'W0BOT', 'e0acme', 'E', 'E0ACME>', ''])
      expect(isEnterpriseId(id), id).toBe(false);
  });
});

describe('what a conversation is, from its id and name', () => {
  it('a direct message has a D… id', () => {
    expect(isDirectMessage('D0ALICE')).toBe(true);
    for (const id of ['C0DOCS', 'G0GROUP', 'W0GRIDUSER', 'U0ALICE', 'd0lower', ''])
      expect(isDirectMessage(id), id).toBe(false);
  });

  it('a slash command from a direct or group direct message is direct, by id or by Slack’s name', () => {
    expect(isDirectConversation('D0ALICE')).toBe(true);
    expect(isDirectConversation('D0ALICE', 'privategroup')).toBe(true);
    // A group DM's id looks like a private channel's: only its name tells.
    expect(isDirectConversation('G0MPDM', 'mpdm')).toBe(true);
    expect(isDirectConversation('C0MPDM', 'directmessage')).toBe(true);
    expect(isDirectConversation('G0GROUP', 'privategroup')).toBe(false);
    expect(isDirectConversation('C0DOCS', 'docs')).toBe(false);
    expect(isDirectConversation('C0DOCS', 'mpdm-alice--bob-1')).toBe(false);
    expect(isDirectConversation('C0DOCS')).toBe(false);
  });

  it('a channel name says "private" only for the names Slack gives private conversations', () => {
    for (const name of ['privategroup', 'directmessage', 'mpdm'])
      expect(privateByChannelName(name), name).toBe('private');
    // A public channel may be named anything, "private" included: Slack is asked instead.
    for (const name of [undefined, '', 'general', 'private', 'privategroups', 'PrivateGroup'])
      expect(privateByChannelName(name), String(name)).toBeUndefined();
  });

  it('the bot cannot be invited to a direct message or a G… conversation', () => {
    expect(isPrivateConversation('D0ALICE')).toBe(true);
    expect(isPrivateConversation('G0GROUP')).toBe(true);
    // Private channels made since 2021 have C… ids; those take /invite.
    expect(isPrivateConversation('C0PRIVATE')).toBe(false);
    expect(isPrivateConversation('C0DOCS')).toBe(false);
  });
});

/** A `block_actions` payload's common fields as Slack documents them, for a single workspace. */
const click = {
  type: 'block_actions',
  team: { id: 'T0WORKSPACE', domain: 'example' },
  user: { id: 'U0PRESSER', username: 'presser', team_id: 'T0WORKSPACE' },
  channel: { id: 'C0CHANNEL', name: 'docs' },
  response_url: 'https://hooks.slack.com/actions/T0WORKSPACE/1/abc',
  actions: [{ action_id: 'anything', value: '1' }],
};

/** The same click in an organisation-wide install: no `team`, an Enterprise Grid `W…` person. */
const gridClick = {
  ...click,
  team: null,
  enterprise: { id: 'E0ORG', name: 'Org' },
  is_enterprise_install: true,
  user: { id: 'W0PRESSER', username: 'presser', team_id: 'T0OTHER' },
};

describe('a button click', () => {
  it('reads who clicked, where, and where to answer', () => {
    expect(clickSchema.parse(click)).toEqual({
      team: { id: 'T0WORKSPACE' },
      user: { id: 'U0PRESSER', team_id: 'T0WORKSPACE' },
      channel: { id: 'C0CHANNEL' },
      response_url: click.response_url,
    });
  });

  it('takes an organisation-wide install, where team is null and the person a W… id', () => {
    const parsed = clickSchema.parse(gridClick);
    expect(parsed.team).toBeNull();
    expect(parsed.user.id).toBe('W0PRESSER');
    expect(clickersTeam(parsed)).toBe('T0OTHER');
  });

  it("takes the payload's workspace when the person's own is not said, and none when neither is", () => {
    const { team_id: _, ...user } = click.user;
    expect(clickersTeam(clickSchema.parse({ ...click, user }))).toBe('T0WORKSPACE');
    expect(clickersTeam(clickSchema.parse({ ...click, team: null, user }))).toBeUndefined();
  });

  it('refuses a click without a person id, or without a channel', () => {
    expect(clickSchema.safeParse({ ...click, user: { ...click.user, id: 'an app' } }).success).toBe(false);
    const { channel: _, ...noChannel } = click;
    expect(clickSchema.safeParse(noChannel).success).toBe(false);
    expect(clickSchema.safeParse({ ...click, response_url: 'not a url' }).success).toBe(false);
  });
});
