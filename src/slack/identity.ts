import type { Logger } from '../logging/logger.js';
import type { SlackCaller } from './caller.js';
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

export interface BotIdentity {
  /** The installing workspace; undefined for an organisation-wide install, which has none of its own. */
  teamId: string | undefined;
  botUserId: string | undefined;
  botId: string | undefined;
  /** The workspace's address, `https://example.slack.com/`: the base of message permalinks. */
  url: string | undefined;
}

/** After a failed auth.test, how long before asking again, in milliseconds. */
export const IDENTITY_RETRY_MS = 30_000;

/**
 * Who the bot is (auth.test), learned once and cached, and where it is installed (see
 * {@link Installation}). If Slack cannot say at the moment, the answer is `undefined` and the
 * question is asked again later, so start-up never depends on it.
 */
export function createIdentity(caller: SlackCaller, logger: Logger, now: () => number = Date.now) {
  let known: BotIdentity | undefined;
  /** The installation as auth.test described it. */
  let answered: Installation | undefined;
  let failedAt = Number.NEGATIVE_INFINITY;
  let pending: Promise<BotIdentity | undefined> | undefined;
  /** The installation as the first signed request described it. */
  let noted: Installation | undefined;
  const workspaces = createOrgWorkspaces(caller, logger, now);
  /** auth.test's word, else a request's. */
  const installation = (): Installation | undefined => answered ?? noted;

  const get = async (): Promise<BotIdentity | undefined> => {
    if (known) return known;
    if (now() - failedAt < IDENTITY_RETRY_MS) return undefined;
    pending ??= caller
      .call('auth.test', {}, (client) => client.auth.test())
      .then((r) => {
        answered = installationOfAuthTest(r);
        const teamId = answered?.kind === 'workspace' ? answered.teamId : undefined;
        known = { teamId, botUserId: r.user_id, botId: r.bot_id, url: r.url };
        return known;
      })
      .catch((error: unknown) => {
        failedAt = now();
        logger.warn('auth.test failed; the bot identity is unknown for now', { error });
        return undefined;
      })
      .finally(() => {
        pending = undefined;
      });
    return pending;
  };

  return {
    /**
     * Records the installation as an Events API request names it (its bot `authorizations`): a
     * workspace's id (`T…`), or an organisation's (`E…`) for an organisation-wide install. A
     * signed request says which installation it is for, so the bot knows where it is installed
     * without waiting for auth.test; the first one named is kept, and auth.test's word wins.
     */
    noteInstallation(id: string): void {
      noted ??= installationOfId(id);
    },
    /** The installation, from auth.test or from a request; undefined while neither has said. */
    installation,
    /** The installing workspace of a single-workspace install; undefined for an organisation-wide one. */
    installedTeamId(): string | undefined {
      const found = installation();
      return found?.kind === 'workspace' ? found.teamId : undefined;
    },
    /**
     * The workspaces of an organisation-wide installation (auth.teams.list, cached: see
     * {@link createOrgWorkspaces}); undefined for a workspace install (never asked) and while Slack
     * cannot say.
     */
    async organizationWorkspaces(): Promise<ReadonlySet<string> | undefined> {
      return installation()?.kind === 'organization' ? workspaces.list() : undefined;
    },
    /**
     * What is known now, without waiting; starts a look-up if nothing is. For the hot path
     * (acknowledging Slack), which must never wait on another Slack call.
     */
    peek(): BotIdentity | undefined {
      if (!known) void get();
      return known;
    },
    get,
  };
}

export type Identity = ReturnType<typeof createIdentity>;

/** How long an organisation's list of workspaces is trusted, in milliseconds. */
export const WORKSPACES_CACHE_MS = 60 * 60_000;
/** After a failed auth.teams.list, how long before asking again, in milliseconds. */
export const WORKSPACES_RETRY_MS = 30_000;
/** Workspaces asked for per page of auth.teams.list. */
export const WORKSPACES_PAGE_SIZE = 200;
/** Most pages read: a longer list is kept in part (see {@link createOrgWorkspaces}). */
export const WORKSPACES_PAGES = 10;

export interface OrgWorkspaces {
  /**
   * The workspaces the organisation has granted the app (auth.teams.list), or undefined while
   * Slack cannot say. Asked when first needed, then at most once per {@link WORKSPACES_CACHE_MS}
   * (and once per {@link WORKSPACES_RETRY_MS} while it fails); callers at the same time share
   * one look-up.
   */
  list(): Promise<ReadonlySet<string> | undefined>;
}

/**
 * The workspaces of an organisation-wide installation. The list only says who is surely inside:
 * a workspace missing from it (not granted the app, beyond the pages read, added since) is left
 * to Slack's word on each person (users.info), so a partial or stale list refuses no one wrongly.
 */
export function createOrgWorkspaces(
  caller: SlackCaller,
  logger: Logger,
  now: () => number = Date.now,
): OrgWorkspaces {
  let known: { teams: ReadonlySet<string>; at: number } | undefined;
  let failedAt = Number.NEGATIVE_INFINITY;
  let pending: Promise<ReadonlySet<string> | undefined> | undefined;

  async function read(): Promise<ReadonlySet<string>> {
    const teams = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < WORKSPACES_PAGES; page++) {
      const page = { limit: WORKSPACES_PAGE_SIZE, ...(cursor ? { cursor } : {}) };
      const answer = await caller.call('auth.teams.list', page, (client, args) =>
        client.auth.teams.list(args),
      );
      for (const team of answer.teams ?? []) if (team.id && isTeamId(team.id)) teams.add(team.id);
      cursor = answer.response_metadata?.next_cursor || undefined;
      if (!cursor) return teams;
    }
    logger.warn(
      'the organisation has more workspaces than are read; the others are decided person by person',
      {
        read: teams.size,
      },
    );
    return teams;
  }

  return {
    async list() {
      if (known && now() - known.at < WORKSPACES_CACHE_MS) return known.teams;
      if (now() - failedAt < WORKSPACES_RETRY_MS) return undefined;
      pending ??= read()
        .then((teams) => {
          known = { teams, at: now() };
          return teams;
        })
        .catch((error: unknown) => {
          // Fail closed: an expired list is not trusted past its time either.
          known = undefined;
          failedAt = now();
          logger.warn('auth.teams.list failed; the organisation’s workspaces are unknown for now', { error });
          return undefined;
        })
        .finally(() => {
          pending = undefined;
        });
      return pending;
    },
  };
}
