import type { WebClient } from '@slack/web-api';
import type { Logger } from '../logging/logger.js';

export interface BotIdentity {
  teamId: string | undefined;
  botUserId: string | undefined;
  botId: string | undefined;
  /** The workspace's address, `https://example.slack.com/`: the base of message permalinks. */
  url: string | undefined;
}

/** After a failed auth.test, how long before asking again, in milliseconds. */
export const IDENTITY_RETRY_MS = 30_000;

/**
 * Who the bot is (auth.test), learned once and cached. If Slack cannot say at the moment, the
 * answer is `undefined` and the question is asked again later, so start-up never depends on it.
 */
export function createIdentity(client: WebClient, logger: Logger, now: () => number = Date.now) {
  let known: BotIdentity | undefined;
  let failedAt = Number.NEGATIVE_INFINITY;
  let pending: Promise<BotIdentity | undefined> | undefined;
  let installation: string | undefined;

  return {
    /**
     * Records the installing workspace as an Events API request names it (its bot
     * `authorizations`): a signed request says which installation it is for, so the bot knows
     * its own workspace without waiting for auth.test.
     */
    noteInstallation(teamId: string): void {
      installation ??= teamId;
    },
    /** The installing workspace, from auth.test or from a request; undefined while neither has said. */
    installedTeamId(): string | undefined {
      return known?.teamId ?? installation;
    },
    /**
     * What is known now, without waiting; starts a look-up if nothing is. For the hot path
     * (acknowledging Slack), which must never wait on another Slack call.
     */
    peek(): BotIdentity | undefined {
      if (!known) void this.get();
      return known;
    },
    async get(): Promise<BotIdentity | undefined> {
      if (known) return known;
      if (now() - failedAt < IDENTITY_RETRY_MS) return undefined;
      pending ??= client.auth
        .test()
        .then((r) => {
          known = { teamId: r.team_id, botUserId: r.user_id, botId: r.bot_id, url: r.url };
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
    },
  };
}

export type Identity = ReturnType<typeof createIdentity>;
