import { AGENT_HOURLY_LIMIT } from '../agent/schema.js';
import { type Config, projectOfRecord } from '../config/config.js';
import type { Logger } from '../logging/logger.js';
import { SlackCallError } from '../slack/caller.js';
import type { SlackGateway, SlackUser } from '../slack/gateway.js';
import type { Identity } from '../slack/identity.js';
import { isDirectMessage } from '../slack/ids.js';
import type { UsesStore } from '../store/types.js';
import { BoundedCache } from '../util/lru.js';
import { createMembership } from './membership.js';

/** Who is asking, and where. */
export interface Requester {
  /**
   * The author's own workspace (`user_team` in a shared channel, `user.team_id` in an
   * interaction); undefined when what Slack sent did not say, and then users.info decides.
   */
  teamId: string | undefined;
  /** Where they ask; undefined where no channel applies (the App Home). */
  channelId: string | undefined;
  userId: string;
  /** In the assistant pane opened beside a channel: that channel (its allow-list applies too). */
  contextChannelId?: string | undefined;
}

/**
 * `rate`: the person's hourly limit; `project_rate`: the documentation project's;
 * `direct`: direct messages to the bot are not allowed here (`ALLOW_DIRECT_MESSAGES`);
 * `unverified`: Slack cannot say right now whether the author is a guest or of this workspace,
 * so nothing may be sent for them yet (the instruction is held and checked again).
 */
export type RefusalReason =
  | 'team'
  | 'channel'
  | 'direct'
  | 'user'
  | 'guest'
  | 'rate'
  | 'project_rate'
  | 'unverified';

export type AccessDecision =
  | { allowed: true }
  | {
      allowed: false;
      reason: RefusalReason;
      /** When the person may try again (hourly limits only). */
      retryAt?: Date;
      /** The hourly limit that was reached (hourly limits only). */
      limit?: number;
    };

export interface AccessPolicy {
  /**
   * Whether this person may use the bot here (workspace, channel, person, guests). Fails closed:
   * `unverified` when Slack cannot say who they are.
   */
  check(requester: Requester): Promise<AccessDecision>;
  /**
   * Whether the author of a message could instruct the agent themselves (the same rules but the
   * channel's, which is the job's): only their messages go to the agent as thread context.
   * False when Slack cannot say, and for apps when only listed people may use the bot.
   */
  mayInstruct(author: { userId: string | undefined; teamId: string | undefined }): Promise<boolean>;
  /**
   * Counts the run (an instruction checked with {@link AccessPolicy.check}) as one use against its
   * author's hourly limit and its project's, or refuses it when either is reached. The check and
   * the count are one store transaction, so simultaneous instructions never get past a limit.
   * A run whose call then surely did not reach the agent (it ends `failed`) stops counting.
   */
  reserve(runId: number): Promise<AccessDecision>;
  /**
   * Whether the person and the project still have a use left in the rolling hour, counting
   * nothing: a courtesy before recording work that replaces other work ("Try again"), so a
   * person over a limit is told before anything changes. Only {@link AccessPolicy.reserve} is
   * binding under bursts.
   */
  room(userId: string, projectId: string | null): Promise<AccessDecision>;
}

/** How long account facts from users.info are trusted, in milliseconds. */
export const USER_CACHE_MS = 10 * 60_000;
/** Most people whose account facts are kept; the least recently seen are forgotten first. */
export const MAX_CACHED_USERS = 5_000;
export const HOUR_MS = 3_600_000;

export interface AccessPolicyDeps {
  config: Config['access'];
  identity: Identity;
  slack: SlackGateway;
  store: UsesStore;
  logger: Logger;
  /** The deployment's documentation project (`DOCS_AGENT_PROJECT_ID`): jobs recorded without one ran there. */
  defaultProject: string;
  /** Uses of one project per hour; default the agent API's limit, {@link AGENT_HOURLY_LIMIT}. */
  projectHourlyLimit?: number;
  now?: () => number;
}

/** Whether `ALLOWED_CHANNEL_IDS` lets the bot be used in a channel (no list: every channel). */
export const channelAllowed = (
  config: Pick<Config['access'], 'allowedChannelIds'>,
  channelId: string,
): boolean => config.allowedChannelIds === null || config.allowedChannelIds.has(channelId);

/**
 * The access rules, checked before anything reaches the agent API: people of the installation
 * only (its workspace, or any workspace of its organisation for an organisation-wide install:
 * see `membership.ts`), allowed channels and people, no guests unless allowed, a per-person
 * hourly limit so one person cannot spend the whole project's agent quota, and the project's
 * own hourly limit.
 */
export function createAccessPolicy(deps: AccessPolicyDeps): AccessPolicy {
  const { config, identity, slack, store, logger } = deps;
  const now = deps.now ?? Date.now;
  const projectLimit = deps.projectHourlyLimit ?? AGENT_HOURLY_LIMIT;
  const users = new BoundedCache<SlackUser>(MAX_CACHED_USERS, USER_CACHE_MS, now);

  /**
   * The person's account as Slack knows it (cached per person, bounded): `gone` when Slack says
   * there is no such person, `unknown` when it cannot say right now.
   */
  async function account(userId: string): Promise<SlackUser | 'gone' | 'unknown'> {
    const cached = users.get(userId);
    if (cached) return cached;
    try {
      const user = await slack.userInfo(userId);
      users.set(userId, user);
      return user;
    } catch (error) {
      // A definite "no such user" refuses. Anything else (an outage, a time-out) leaves the
      // question open: nothing is sent for this person until Slack answers.
      if (error instanceof SlackCallError && error.code === 'user_not_found') return 'gone';
      logger.warn('could not look up the account type; the instruction waits', { userId, error });
      return 'unknown';
    }
  }

  const membership = createMembership(identity);

  /**
   * Where the person asks, against the channel rules. A direct message is allowed when
   * `ALLOW_DIRECT_MESSAGES` says so, and by default only while no channel allow-list is set (fail
   * closed: an allow-list means "only there"); the channel the assistant pane is open beside must
   * pass the allow-list like any channel.
   */
  const placeRefusal = (
    channelId: string | undefined,
    contextChannelId: string | undefined,
  ): RefusalReason | undefined => {
    if (channelId === undefined) return undefined;
    if (!isDirectMessage(channelId)) return channelAllowed(config, channelId) ? undefined : 'channel';
    if (config.allowDirectMessages === false) return 'direct';
    if (contextChannelId) return channelAllowed(config, contextChannelId) ? undefined : 'channel';
    return config.allowDirectMessages === true || channelAllowed(config, channelId) ? undefined : 'direct';
  };

  const decide = async ({
    teamId,
    channelId,
    userId,
    contextChannelId,
  }: Requester): Promise<AccessDecision> => {
    const installed = await membership.installed();
    // The workspace the request names, when it surely is outside, refuses before Slack is asked.
    if (installed && teamId && membership.teamOutside(installed, teamId))
      return { allowed: false, reason: 'team' };
    const place = placeRefusal(channelId, contextChannelId);
    if (place) return { allowed: false, reason: place };
    if (config.allowedUserIds && !config.allowedUserIds.has(userId))
      return { allowed: false, reason: 'user' };
    if (!installed) return { allowed: false, reason: 'unverified' };
    if (config.allowGuests && teamId && (await membership.teamInside(installed, teamId)))
      return { allowed: true };
    // Asked also when guests are allowed but the request did not name a workspace surely inside
    // (a thread message read back with conversations.replies carries none): Slack's answer says.
    const found = await account(userId);
    if (found === 'unknown') return { allowed: false, reason: 'unverified' };
    if (found === 'gone') return { allowed: false, reason: 'guest' };
    if (!config.allowGuests && (found.isRestricted || found.isUltraRestricted || found.deleted))
      return { allowed: false, reason: 'guest' };
    const inside = await membership.personInside(installed, found, teamId);
    if (inside === undefined) return { allowed: false, reason: 'unverified' };
    return inside ? { allowed: true } : { allowed: false, reason: 'team' };
  };

  return {
    check: decide,
    async mayInstruct({ userId, teamId }) {
      if (!userId) {
        // An app's message: apps instruct nobody, but where anyone may use the bot an
        // integration of the installation's workspaces is as trusted as its people.
        const installed = await membership.installed();
        if (config.allowedUserIds || !installed || !teamId) return false;
        return membership.teamInside(installed, teamId);
      }
      return (await decide({ teamId, channelId: undefined, userId })).allowed;
    },
    async room(userId, projectId) {
      const at = now();
      const [mine, uses] = await Promise.all([
        store.recentInstructions(userId, at - HOUR_MS),
        store.instructionsSince(at - HOUR_MS),
      ]);
      const perUser = config.maxInstructionsPerUserPerHour;
      if (mine.count >= perUser)
        return {
          allowed: false,
          reason: 'rate',
          retryAt: new Date((mine.oldest ?? at) + HOUR_MS),
          limit: perUser,
        };
      const project = projectOfRecord(projectId, deps.defaultProject);
      const used = uses
        .filter((u) => projectOfRecord(u.projectId, deps.defaultProject) === project)
        .reduce((n, u) => n + u.count, 0);
      return used >= projectLimit
        ? { allowed: false, reason: 'project_rate', limit: projectLimit }
        : { allowed: true };
    },
    async reserve(runId) {
      const perUser = config.maxInstructionsPerUserPerHour;
      const use = await store.reserveUse(
        runId,
        { perUser, perProject: projectLimit, defaultProject: deps.defaultProject, windowMs: HOUR_MS },
        now(),
      );
      if (use.reserved) return { allowed: true };
      const byUser = use.limit === 'user';
      return {
        allowed: false,
        reason: byUser ? 'rate' : 'project_rate',
        retryAt: new Date(use.freeAt),
        limit: byUser ? perUser : projectLimit,
      };
    },
  };
}
