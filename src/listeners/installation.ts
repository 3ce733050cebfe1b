import type { AnyMiddlewareArgs, Middleware } from '@slack/bolt';
import type { Identity } from '../slack/identity.js';
import { installationOfId } from '../slack/identity.js';

interface BotAuthorization {
  team_id?: unknown;
  enterprise_id?: unknown;
  is_bot?: unknown;
  is_enterprise_install?: unknown;
}

/**
 * The installation an Events API request was delivered for, by its bot authorization: the
 * workspace's id, or the organisation's (`enterprise_id`, with `team_id: null`) for an
 * organisation-wide install.
 */
export function installationIdOf(body: unknown): string | undefined {
  const auths = (body as { authorizations?: BotAuthorization[] }).authorizations;
  const bot = Array.isArray(auths) ? auths.find((a) => a?.is_bot === true) : undefined;
  if (!bot) return undefined;
  const id = bot.is_enterprise_install === true ? bot.enterprise_id : bot.team_id;
  return typeof id === 'string' && installationOfId(id) ? id : undefined;
}

/**
 * Runs before every listener: learns the installation from the signed request itself, so an
 * author from another organisation is recognised even while auth.test cannot answer.
 */
export function learnInstallation(
  identity: Pick<Identity, 'noteInstallation'>,
): Middleware<AnyMiddlewareArgs> {
  return async ({ body, next }) => {
    const id = installationIdOf(body);
    if (id) identity.noteInstallation(id);
    await next();
  };
}
