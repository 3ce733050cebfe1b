import type { AnyMiddlewareArgs, Middleware } from '@slack/bolt';
import type { Identity } from '../slack/identity.js';

/** The workspace an Events API request was delivered for: its bot authorization's team. */
export function installationTeamOf(body: unknown): string | undefined {
  const auths = (body as { authorizations?: { team_id?: unknown; is_bot?: unknown }[] }).authorizations;
  const bot = Array.isArray(auths) ? auths.find((a) => a?.is_bot === true) : undefined;
  return typeof bot?.team_id === 'string' && /^[TE][A-Z0-9]+$/.test(bot.team_id) ? bot.team_id : undefined;
}

/**
 * Runs before every listener: learns the installing workspace from the signed request itself,
 * so an author from another organisation is recognised even while auth.test cannot answer.
 */
export function learnInstallation(
  identity: Pick<Identity, 'noteInstallation'>,
): Middleware<AnyMiddlewareArgs> {
  return async ({ body, next }) => {
    const team = installationTeamOf(body);
    if (team) identity.noteInstallation(team);
    await next();
  };
}
