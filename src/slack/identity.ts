import type { Logger } from '../logging/logger.js';
import type { SlackCaller } from './caller.js';
import { type Installation, installationOfAuthTest, installationOfId } from './installation.js';
import { createOrgWorkspaces } from './org-workspaces.js';

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
     * `org-workspaces.ts`); undefined for a workspace install (never asked) and while Slack
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
