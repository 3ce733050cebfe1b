import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import type { Config } from '../../config/config.js';
import type { HomePublisher } from '../../home/home-publisher.js';
import type { SlackGateway } from '../../slack/gateway.js';
import { userIdSchema } from '../../slack/ids.js';
import type { HomeViewsStore } from '../../store/types.js';
import type { TaskTracker } from '../../util/tasks.js';

const homeSchema = z.object({
  user: userIdSchema,
  tab: z.string().optional(),
  channel: z.string().min(1).optional(),
});

/** What the App Home is shown with: the publisher of its Home tab, the prompts for its Messages tab. */
export interface AppHomeDeps {
  config: Pick<Config, 'suggestedPrompts'>;
  home: Pick<HomePublisher, 'publish'>;
  slack: Pick<SlackGateway, 'assistantThread'>;
  store: Pick<HomeViewsStore, 'recordHomeOpened'>;
  tasks: Pick<TaskTracker, 'run'>;
}

/**
 * The App Home opened. Its Home tab: publish the person's recent jobs and the guide, and keep it
 * fresh. Its Messages tab, where agent messaging holds conversations (replacing
 * `assistant_thread_started`): show the suggested prompts.
 */
export function appHomeOpened(deps: AppHomeDeps) {
  return async ({ event, body }: SlackEventMiddlewareArgs<'app_home_opened'> & AllMiddlewareArgs) => {
    const parsed = homeSchema.safeParse(event);
    if (parsed.success && parsed.data.tab === 'messages') return suggestPrompts(deps, parsed.data.channel);
    // The About tab raises the same event; only Home shows what the bot publishes.
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

/** Prompts for the conversation (no thread: Slack ignores a thread there); a courtesy, as in the pane. */
function suggestPrompts(
  deps: Pick<AppHomeDeps, 'config' | 'slack' | 'tasks'>,
  channel: string | undefined,
): void {
  const prompts = deps.config.suggestedPrompts;
  if (!channel || prompts.length === 0) return;
  deps.tasks.run('suggest prompts', () => deps.slack.assistantThread({ channel, prompts }));
}
