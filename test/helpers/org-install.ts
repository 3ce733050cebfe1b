/**
 * An organisation-wide (Enterprise Grid) install, in the shapes Slack documents for one
 * ("Reference: organization-wide apps"; the payloads of commands, events, interactivity and
 * custom steps): the organisation's ids beside each workspace's, `"team": null` in
 * interactivity, `is_enterprise_install`, and people with `W…` ids.
 */
import { interaction } from './payloads.js';
import type { OrgInstall, SlackStandIn } from './slack-stand-in.js';

export const ORG: OrgInstall = {
  enterpriseId: 'E0ACME',
  // Granted the app; T0ACMESALES, the organisation's too, is not.
  workspaces: ['T0ACMEDOCS', 'T0ACMEENG'],
  botUserId: 'W0BOT',
};

/** People of the organisation's workspaces, and of another organisation. */
export const PEOPLE = {
  anna: { id: 'W0ANNA', teamId: 'T0ACMEDOCS', enterpriseId: 'E0ACME' },
  ben: { id: 'W0BEN', teamId: 'T0ACMEENG', enterpriseId: 'E0ACME' },
  sam: { id: 'W0SAM', teamId: 'T0ACMESALES', enterpriseId: 'E0ACME' },
  max: { id: 'W0MAX', teamId: 'T0GLOBEX', enterpriseId: 'E0GLOBEX' },
} as const;

export type Person = (typeof PEOPLE)[keyof typeof PEOPLE];

/** Makes the stand-in an organisation-wide install that knows the people above. */
export function installOrgWide(slack: SlackStandIn, org: OrgInstall = ORG): void {
  slack.installOrgWide(org);
  for (const p of Object.values(PEOPLE))
    slack.gridMembers.set(p.id, { teamId: p.teamId, enterpriseId: p.enterpriseId });
}

let counter = 0;
const unique = () => `${Date.now()}${++counter}`;

/** A slash command of a person, in the workspace they are in (their own): form-encoded. */
export function orgCommand(
  person: Person,
  fields: { text: string; channel_id: string; response_url: string },
) {
  return new URLSearchParams({
    token: 'legacy-verification-token',
    team_id: person.teamId,
    team_domain: person.teamId.toLowerCase(),
    enterprise_id: person.enterpriseId,
    enterprise_name: `Org ${person.enterpriseId}`,
    channel_name: 'docs',
    user_id: person.id,
    user_name: person.id.toLowerCase(),
    command: '/docs-agent',
    api_app_id: 'A0APP',
    is_enterprise_install: 'true',
    trigger_id: `trigger.${unique()}`,
    ...fields,
  }).toString();
}

/**
 * An Events API envelope of an event in one of the organisation's workspaces: the workspace's
 * `team_id`, the organisation's `enterprise_id`, and the bot's authorization for the
 * organisation (`team_id: null`, `is_enterprise_install: true`).
 */
export function orgEventEnvelope(event: Record<string, unknown>, teamId: string): string {
  return JSON.stringify({
    token: 'legacy-verification-token',
    team_id: teamId,
    enterprise_id: ORG.enterpriseId,
    context_team_id: teamId,
    context_enterprise_id: ORG.enterpriseId,
    api_app_id: 'A0APP',
    event,
    type: 'event_callback',
    event_id: `Ev${unique()}`,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [
      {
        enterprise_id: ORG.enterpriseId,
        team_id: null,
        user_id: ORG.botUserId,
        is_bot: true,
        is_enterprise_install: true,
      },
    ],
    is_ext_shared_channel: false,
  });
}

/**
 * A `block_actions` click of a person in an organisation-wide install: `"team": null`, the
 * organisation in `enterprise`, and the person's workspace in `user.team_id`.
 */
export function orgBlockActions(
  person: Person,
  where: { channel: string; messageTs: string; responseUrl: string },
  action: Record<string, unknown>,
): string {
  return interaction({
    type: 'block_actions',
    user: {
      id: person.id,
      username: person.id.toLowerCase(),
      name: person.id.toLowerCase(),
      team_id: person.teamId,
    },
    api_app_id: 'A0APP',
    token: 'legacy-verification-token',
    container: {
      type: 'message',
      message_ts: where.messageTs,
      channel_id: where.channel,
      is_ephemeral: false,
    },
    trigger_id: `trigger.${unique()}`,
    team: null,
    enterprise: { id: ORG.enterpriseId, name: 'Acme' },
    is_enterprise_install: true,
    channel: { id: where.channel, name: 'docs' },
    message: { type: 'message', ts: where.messageTs, bot_id: 'B0BOT' },
    response_url: where.responseUrl,
    actions: [{ action_ts: String(Date.now() / 1000), block_id: 'outcome', ...action }],
  });
}
