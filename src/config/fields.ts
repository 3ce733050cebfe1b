import { z } from 'zod';

/** Blank strings count as unset, so a default applies. */
export const blankToUndefined = (value: unknown) =>
  typeof value === 'string' && value.trim() === '' ? undefined : value;

/**
 * A required secret with a known prefix. Secrets are checked by shape only; messages never
 * echo the value.
 */
export const secret = (prefix: string, what: string) =>
  z.preprocess(
    blankToUndefined,
    z
      .string({ error: `is required (${what})` })
      .refine((v) => v.startsWith(prefix), { error: `must start with "${prefix}" (${what})` }),
  );

/** An optional secret with a known prefix; see {@link secret}. */
export const optionalSecret = (prefix: string, what: string) =>
  z.preprocess(
    blankToUndefined,
    z
      .string()
      .refine((v) => v.startsWith(prefix), { error: `must start with "${prefix}" (${what})` })
      .optional(),
  );

/** Hosts plain `http:` may reach: nothing on the way can read or change the traffic. */
function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/**
 * A service base URL. Secrets travel to these URLs (the bot token, the admin key): plain http
 * only on this machine.
 */
export const serviceUrl = (fallback: string) =>
  z.preprocess(
    blankToUndefined,
    z
      .string()
      .default(fallback)
      .superRefine((v, ctx) => {
        let url: URL;
        try {
          url = new URL(v);
        } catch {
          ctx.addIssue({ code: 'custom', message: 'must be an http(s) URL' });
          return;
        }
        if (url.protocol === 'https:') return;
        if (url.protocol !== 'http:') {
          ctx.addIssue({ code: 'custom', message: 'must be an http(s) URL' });
        } else if (!isLoopbackHost(url.hostname)) {
          ctx.addIssue({
            code: 'custom',
            message:
              'must use https: the bot sends its credentials there (plain http is allowed only to a loopback address: localhost, 127.0.0.0/8, [::1])',
          });
        }
      }),
  );

/** A whole number within `min`..`max`, `fallback` when unset; `unit` is named in messages. */
export const integer = (fallback: number, min: number, max: number, unit: string) =>
  z.preprocess(
    blankToUndefined,
    z.coerce
      .number({ error: `must be a whole number (${unit})` })
      .int({ error: `must be a whole number (${unit})` })
      .min(min, { error: `must be at least ${min} (${unit})` })
      .max(max, { error: `must be at most ${max} (${unit})` })
      .default(fallback),
  );

/**
 * A comma-separated list of Slack ids; empty means "no restriction". `pattern` is what each id
 * must look like (default: any Slack id).
 */
export const idList = (what: string, pattern = /^[A-Z0-9]+$/) =>
  z.preprocess(
    blankToUndefined,
    z
      .string()
      .optional()
      .transform((v) =>
        v
          ? v
              .split(',')
              .map((id) => id.trim())
              .filter(Boolean)
          : [],
      )
      .refine((ids) => ids.every((id) => pattern.test(id)), {
        error: `must be a comma-separated list of ${what}`,
      }),
  );

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
