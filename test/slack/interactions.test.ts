import { describe, expect, it } from 'vitest';
import { clickersTeam, clickSchema } from '../../src/slack/interactions.js';

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
