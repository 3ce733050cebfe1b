import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import type { ListenerDeps } from '../types.js';

const homeSchema = z.object({ user: z.string().min(1), tab: z.string().optional() });

/** The App Home tab opened: publish the person's recent jobs and the guide, and keep it fresh. */
export function appHomeOpened(deps: ListenerDeps) {
  return async ({ event, body }: SlackEventMiddlewareArgs<'app_home_opened'> & AllMiddlewareArgs) => {
    const parsed = homeSchema.safeParse(event);
    // The Messages and About tabs raise the same event; only Home shows what the bot publishes.
    if (!parsed.success || (parsed.data.tab !== undefined && parsed.data.tab !== 'home')) return;
    const userId = parsed.data.user;
    const teamId = (body as { team_id?: string }).team_id ?? null;
    // A view refresh: when every background slot is taken it is left out, and the tab shows what
    // was published last until the next open or job change (the tracker logs that).
    deps.tasks.run('publish App Home', async () => {
      await deps.store.recordHomeOpened(userId, teamId, Date.now());
      await deps.home.publish(userId);
    });
  };
}
