import type { Logger } from '../logging/logger.js';
import type { SlackCaller } from './caller.js';
import { isTeamId } from './ids.js';

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
