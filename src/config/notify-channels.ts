import { z } from 'zod';
import { blankToUndefined } from './fields.js';

/**
 * Where run outcomes are announced (`NOTIFY_CHANNEL_ID`): a channel for every project, channels
 * for some projects, or both.
 */
export interface NotifyChannels {
  /** The channel of projects not listed in `byProject`; undefined: they are not announced. */
  fallback: string | undefined;
  /** Channel by documentation project id. */
  byProject: ReadonlyMap<string, string>;
}

/** A public or private channel id: a direct message is no place for a team's notifications. */
const CHANNEL_ID = /^[CG][A-Z0-9]{2,}$/;
const PROJECT_ID = /^[A-Za-z0-9._-]+$/;

const SYNTAX =
  'must be a channel id (C0123ABCD) for every project, and/or channel:project pairs for single projects, comma-separated, such as C0123ABCD,C0456EFGH:sdk-docs';

/**
 * `NOTIFY_CHANNEL_ID`: comma-separated entries, each a channel id alone (every project not
 * listed otherwise; at most one) or `channel:project`, the order `CHANNEL_PROJECTS` uses.
 * A channel always comes first, so no entry can be read two ways.
 */
export const notifyChannels = () =>
  z.preprocess(
    blankToUndefined,
    z
      .string()
      .optional()
      .transform((v, ctx): NotifyChannels => {
        const entries = (v ?? '')
          .split(',')
          .map((entry) => entry.trim())
          .filter(Boolean)
          .map((entry) => entry.split(':').map((part) => part.trim()));
        const bad = entries.filter(
          ([channel = '', project, ...rest]) =>
            !CHANNEL_ID.test(channel) ||
            rest.length > 0 ||
            (project !== undefined && !PROJECT_ID.test(project)),
        );
        if (bad.length > 0) ctx.addIssue({ code: 'custom', message: SYNTAX });
        const fallbacks = entries.filter((e) => e.length === 1);
        if (fallbacks.length > 1)
          ctx.addIssue({ code: 'custom', message: 'names more than one channel for every project' });
        const pairs = entries.filter((e) => e.length === 2) as [string, string][];
        const projects = pairs.map(([, project]) => project);
        if (new Set(projects).size !== projects.length)
          ctx.addIssue({ code: 'custom', message: 'lists a project twice' });
        return {
          fallback: fallbacks[0]?.[0],
          byProject: new Map(pairs.map(([channel, project]) => [project, channel])),
        };
      }),
  );

/** The channel where runs of `projectId` are announced, if any. */
export const notifyChannelFor = (channels: NotifyChannels, projectId: string): string | undefined =>
  channels.byProject.get(projectId) ?? channels.fallback;
