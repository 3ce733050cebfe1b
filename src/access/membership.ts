import type { SlackUser } from '../slack/gateway.js';
import type { Identity } from '../slack/identity.js';
import type { Installation } from '../slack/installation.js';

/**
 * Who is inside the installation (see {@link Installation}): of its workspace, or of any
 * workspace of its organisation for an organisation-wide install. Fails closed: what Slack
 * cannot say is `undefined`, never inside.
 */
export interface Membership {
  /** The installation, asking auth.test when neither it nor a signed request has said yet. */
  installed(): Promise<Installation | undefined>;
  /**
   * Whether a workspace a request named is inside: `false` only when it surely is not, and
   * `undefined` when Slack's word on the person must decide (an organisation's workspace that
   * is not on its list of granted ones may still be the organisation's).
   */
  teamInside(installed: Installation, teamId: string): Promise<boolean | undefined>;
  /**
   * Whether a person is inside, by Slack's word on them (users.info): their organisation
   * (`enterprise_user`) for an organisation-wide install, else their workspace (Slack's, or
   * the request's when Slack named none). `undefined` when that cannot be told now.
   */
  personInside(
    installed: Installation,
    person: Pick<SlackUser, 'teamId' | 'enterpriseId'>,
    requestTeamId: string | undefined,
  ): Promise<boolean | undefined>;
}

export function createMembership(
  identity: Pick<Identity, 'installation' | 'get' | 'organizationWorkspaces'>,
): Membership {
  /** For an organisation: its own id or one of its listed workspaces; `undefined` when the list is unknown. */
  const listed = async (enterpriseId: string, teamId: string): Promise<boolean | undefined> => {
    if (teamId === enterpriseId) return true;
    const workspaces = await identity.organizationWorkspaces();
    return workspaces ? workspaces.has(teamId) : undefined;
  };

  return {
    async installed() {
      const known = identity.installation();
      if (known) return known;
      await identity.get();
      return identity.installation();
    },
    async teamInside(installed, teamId) {
      if (installed.kind === 'workspace') return teamId === installed.teamId;
      return (await listed(installed.enterpriseId, teamId)) || undefined;
    },
    async personInside(installed, person, requestTeamId) {
      if (installed.kind === 'organization' && person.enterpriseId)
        return person.enterpriseId === installed.enterpriseId;
      // Slack's own word on the person's workspace, for requests that did not carry it.
      const team = person.teamId ?? requestTeamId;
      if (!team) return undefined;
      if (installed.kind === 'workspace') return team === installed.teamId;
      return listed(installed.enterpriseId, team);
    },
  };
}
