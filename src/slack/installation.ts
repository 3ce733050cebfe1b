import { isEnterpriseId, isTeamId } from './ids.js';

/**
 * The installation: what the bot's token was installed in. Either one workspace, or, for an
 * organisation-wide install on Enterprise Grid (`org_deploy_enabled`), an organisation, whose
 * people, of whichever of its workspaces, are inside. Anyone else (another workspace, another
 * organisation, a Slack Connect guest organisation) is outside.
 */
export type Installation =
  | { kind: 'workspace'; teamId: string }
  | { kind: 'organization'; enterpriseId: string };

/** The installation an id names: a workspace's (`T…`) or an organisation's (`E…`); else none. */
export function installationOfId(id: unknown): Installation | undefined {
  if (typeof id !== 'string') return undefined;
  if (isTeamId(id)) return { kind: 'workspace', teamId: id };
  if (isEnterpriseId(id)) return { kind: 'organization', enterpriseId: id };
  return undefined;
}

/** The fields of auth.test's answer that say what the token was installed in. */
export interface AuthTestInstallation {
  team_id?: string | undefined;
  enterprise_id?: string | undefined;
  is_enterprise_install?: boolean | undefined;
}

/**
 * The installation auth.test describes. For an organisation-wide token Slack answers for the
 * organisation (`is_enterprise_install: true`, `enterprise_id`), and its `team_id` is absent,
 * empty or the organisation's own id: never a workspace the bot is limited to. A token of one
 * workspace of a Grid organisation names the organisation too, but `is_enterprise_install` is
 * false: it is that workspace's installation only.
 */
export function installationOfAuthTest(answer: AuthTestInstallation): Installation | undefined {
  if (answer.is_enterprise_install === true) {
    const id = answer.enterprise_id ?? '';
    return isEnterpriseId(id) ? { kind: 'organization', enterpriseId: id } : undefined;
  }
  return installationOfId(answer.team_id);
}
