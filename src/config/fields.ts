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
