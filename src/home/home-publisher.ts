import type { AccessPolicy } from '../access/access-policy.js';
import {
  type FiguresSource,
  type QualityFigures,
  qualityLines,
  readQualityFigures,
} from '../blocks/figures.js';
import { HOME_LIMIT, homeRefusedView, homeView } from '../blocks/job-list.js';
import type { RenderHints } from '../blocks/messages.js';
import { refusalText } from '../blocks/refusal-texts.js';
import type { Config } from '../config/config.js';
import type { Logger } from '../logging/logger.js';
import type { SlackGateway } from '../slack/gateway.js';
import type { Identity } from '../slack/identity.js';
import type { Mrkdwn } from '../slack/mrkdwn.js';
import type { HomeViewsStore, JobsStore } from '../store/types.js';

export interface HomePublisher {
  /** Publishes the person's App Home: their recent jobs, how the agent is doing, and the guide. */
  publish(userId: string): Promise<void>;
  /** Refreshes the App Home of a person who has opened it before; others are left alone. */
  refresh(userId: string): Promise<void>;
}

/**
 * How long the App Home reuses the team's figures, in milliseconds. Every card change refreshes
 * its requester's Home, and the figures read every pull request ever followed: a minute old is
 * fresh enough for a tab, and keeps that read off the path of each card update.
 */
export const FIGURES_FRESH_MS = 60_000;

export function createHomePublisher(deps: {
  /** The App Home shows jobs only to people who may use the bot. */
  access: Pick<AccessPolicy, 'check'>;
  store: Pick<HomeViewsStore, 'homeOpened'> & Pick<JobsStore, 'recentJobs'> & FiguresSource['store'];
  /** The default project, and whether pull requests are followed: for the figures shown under the jobs. */
  config: Pick<Config, 'agent' | 'github'>;
  slack: SlackGateway;
  identity: Identity;
  logger: Logger;
  hints: RenderHints;
  /** Every way to use the bot, shown under the jobs: what `/docs-agent help` answers. */
  guide: (hints: RenderHints) => Mrkdwn;
  now?: () => number;
}): HomePublisher {
  const now = deps.now ?? Date.now;
  let figures: { at: number; read: Promise<QualityFigures> } | undefined;
  /** The team's figures, read at most once a minute (see {@link FIGURES_FRESH_MS}). */
  const teamFigures = (): Promise<QualityFigures> => {
    if (figures && now() - figures.at < FIGURES_FRESH_MS) return figures.read;
    const read = readQualityFigures({
      store: deps.store,
      defaultProject: deps.config.agent.projectId,
      following: deps.config.github.token !== undefined,
    });
    figures = { at: now(), read };
    // A failed read is not kept: the next publish asks again.
    read.catch(() => {
      if (figures?.read === read) figures = undefined;
    });
    return read;
  };
  const publisher: HomePublisher = {
    async publish(userId) {
      // The tab belongs to the installing workspace; guests and people not on the list see why
      // they cannot use the bot, and nothing of the jobs.
      const decision = await deps.access.check({
        teamId: deps.identity.installedTeamId(),
        channelId: undefined,
        userId,
      });
      if (!decision.allowed) {
        await deps.slack.publishHome(userId, homeRefusedView(refusalText(decision)));
        return;
      }
      const [jobs, team] = await Promise.all([
        deps.store.recentJobs({ requesterId: userId }, HOME_LIMIT),
        teamFigures(),
      ]);
      const workspaceUrl = (await deps.identity.get())?.url;
      const ctx = { workspaceUrl, now: now(), prLinkHosts: deps.hints.prLinkHosts, viewer: { userId } };
      await deps.slack.publishHome(userId, homeView(jobs, deps.guide(deps.hints), ctx, qualityLines(team)));
    },
    async refresh(userId) {
      if (!(await deps.store.homeOpened(userId))) return;
      // A stale Home tab is a small harm; a failed refresh must not fail what triggered it.
      await publisher
        .publish(userId)
        .catch((error) => deps.logger.warn('could not refresh the App Home', { userId, error }));
    },
  };
  return publisher;
}
