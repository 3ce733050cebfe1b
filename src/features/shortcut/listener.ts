import type { AllMiddlewareArgs, SlackShortcutMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import type { Config } from '../../config/config.js';
import type { Logger } from '../../logging/logger.js';
import type { SlackGateway } from '../../slack/gateway.js';
import type { Identity } from '../../slack/identity.js';
import { userIdSchema } from '../../slack/ids.js';
import { permalink } from '../../slack/links.js';
import { sharedFiles } from '../../slack/messages.js';
import { type ModalMetadata, modalFiles, sendModal } from './modal.js';

const shortcutSchema = z.object({
  type: z.literal('message_action'),
  trigger_id: z.string().min(1),
  team: z.object({ id: z.string(), domain: z.string().optional() }).nullable().optional(),
  user: z.object({ id: userIdSchema }),
  channel: z.object({ id: z.string().min(1) }),
  message: z.object({
    ts: z.string().min(1),
    thread_ts: z.string().optional(),
    text: z.string().default(''),
    user: z.string().optional(),
    username: z.string().optional(),
    bot_id: z.string().optional(),
    files: z.unknown().optional(),
  }),
});

/** What opening the modal takes: the workspace's address for the message's link, and `views.open`. */
export interface ShortcutDeps {
  config: Pick<Config, 'maxPromptChars'>;
  identity: Pick<Identity, 'peek'>;
  logger: Logger;
  slack: Pick<SlackGateway, 'openView'>;
}

/**
 * "Send to docs agent" on a message: acknowledged first, then the modal opened, prefilled with
 * the message and its link.
 */
export function sendToDocsAgent(deps: ShortcutDeps) {
  return async ({ shortcut, ack }: SlackShortcutMiddlewareArgs & AllMiddlewareArgs) => {
    await ack();
    const parsed = shortcutSchema.safeParse(shortcut);
    if (!parsed.success) {
      deps.logger.warn('message shortcut payload not understood', {
        issues: parsed.error.issues.map((i) => i.path.join('.')),
      });
      return;
    }
    const { message, channel, trigger_id: triggerId, team } = parsed.data;
    const workspaceUrl =
      deps.identity.peek()?.url ?? (team?.domain ? `https://${team.domain}.slack.com/` : undefined);
    const threadTs = message.thread_ts && message.thread_ts !== message.ts ? message.thread_ts : undefined;
    const author = message.user ?? message.username ?? 'an app';
    const link = permalink(workspaceUrl, channel.id, message.ts, threadTs);
    const files = modalFiles(sharedFiles(message.files));
    const metadata: ModalMetadata = {
      channel: channel.id,
      ts: message.ts,
      ...(threadTs ? { threadTs } : {}),
      author,
      ...(link ? { permalink: link } : {}),
      ...(files.length > 0 ? { files } : {}),
    };
    const modal = sendModal({
      message: { text: message.text, author },
      metadata,
      maxPromptChars: deps.config.maxPromptChars,
    });
    // Started, never awaited: over HTTP the receiver answers Slack only once this listener
    // returns, and `views.open` may take up to the Web API client's time-out (10 s) against
    // Slack's 3. Nor is it handed to the background tasks, whose queue and yield to Slack's
    // requests could hold it past the trigger id's own 3 seconds: it starts now.
    void deps.slack.openView(triggerId, modal).catch((error: unknown) => {
      deps.logger.warn('could not open the send-to-agent modal', { error });
    });
  };
}
