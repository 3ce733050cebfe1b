/**
 * The bot's user id for an event: from Bolt's context once auth.test has answered, else from
 * the event's own `authorizations` (the installation the event was delivered for), so the
 * first events after a start are read right too.
 */
export function botUserIdOf(context: { botUserId?: string }, body: unknown): string | undefined {
  if (context.botUserId) return context.botUserId;
  const auths = (body as { authorizations?: { user_id?: unknown; is_bot?: unknown }[] }).authorizations;
  const bot = auths?.find((a) => a.is_bot === true && typeof a.user_id === 'string');
  return bot?.user_id as string | undefined;
}
