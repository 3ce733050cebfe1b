import type { SlackUser } from '../slack/gateway.js';
import type { Identity, Installation } from '../slack/identity.js';

/**
 * Who is inside the installation (see {@link Installation}): of its workspace, or of any
 * workspace of its organisation for an organisation-wide install. Fails closed: what Slack
 * cannot say is `undefined`, never inside.
 */
export interface Membership {
  /** The installation, asking auth.test when neither it nor a signed request has said yet. */
  installed(): Promise<Installation | undefined>;
  /**
   * Whether a workspace a request named is surely outside, from the request alone: another
   * workspace than a workspace install's. Never for an organisation: one of its workspaces that
   * has not been granted the app is still the organisation's, which only Slack's word on the
   * person tells.
   */
  teamOutside(installed: Installation, teamId: string): boolean;
  /**
   * Whether a workspace a request named is surely inside: the installed one, or, for an
   * organisation, the organisation itself or one of the workspaces it granted the app (the
   * list is asked for here, so only where it saves asking about the person); false when the
   * list is unknown.
   */
  teamInside(installed: Installation, teamId: string): Promise<boolean>;
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
    teamOutside: (installed, teamId) => installed.kind === 'workspace' && teamId !== installed.teamId,
    async teamInside(installed, teamId) {
      if (installed.kind === 'workspace') return teamId === installed.teamId;
      return (await listed(installed.enterpriseId, teamId)) === true;
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
