import type { AllMiddlewareArgs, SlackViewMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import { text as say } from '../../jobs/messages.js';
import type { ConversationFacts } from '../../slack/gateway.js';
import { mrkdwnToPlain } from '../../slack/mrkdwn.js';
import { BLOCK, INPUT_ACTION, type ModalMetadata } from '../../views/send-modal.js';
import type { ListenerDeps } from '../types.js';

/** How long the submission waits for Slack to say whether the bot is in the chosen channel. */
const MEMBERSHIP_CHECK_MS = 1_500;

const metadataSchema = z.object({
  channel: z.string().min(1),
  ts: z.string().min(1),
  threadTs: z.string().optional(),
  author: z.string().min(1),
  permalink: z.string().optional(),
});

const submissionSchema = z.object({
  team: z.object({ id: z.string() }).nullable().optional(),
  user: z.object({ id: z.string().min(1), team_id: z.string().optional() }),
  view: z.object({
    id: z.string().min(1),
    private_metadata: z.string(),
    state: z.object({
      values: z.record(
        z.string(),
        z.record(
          z.string(),
          z.object({
            value: z.string().nullable().optional(),
            selected_conversation: z.string().nullable().optional(),
          }),
        ),
      ),
    }),
  }),
});

type Errors = Partial<Record<(typeof BLOCK)[keyof typeof BLOCK], string>>;

/** Whether the bot is in the channel; undefined when Slack cannot say in time (then the job's own post decides). */
async function facts(
  deps: ListenerDeps,
  channel: string,
): Promise<ConversationFacts | 'missing' | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), MEMBERSHIP_CHECK_MS);
  });
  try {
    return await Promise.race([
      deps.slack
        .conversationFacts(channel)
        .catch((error: { code?: string }) =>
          error?.code === 'channel_not_found' ? ('missing' as const) : undefined,
        ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The modal submitted: checks what can be checked at once and answers problems inside the modal;
 * otherwise records the job and closes it.
 */
export function sendToDocsAgentSubmission(deps: ListenerDeps) {
  return async ({ ack, body }: SlackViewMiddlewareArgs & AllMiddlewareArgs) => {
    const parsed = submissionSchema.safeParse(body);
    let metadata: ModalMetadata | undefined;
    try {
      metadata = parsed.success
        ? metadataSchema.parse(JSON.parse(parsed.data.view.private_metadata))
        : undefined;
    } catch {
      metadata = undefined;
    }
    if (!parsed.success || !metadata) {
      deps.logger.warn('modal submission not understood');
      await ack({ response_action: 'errors', errors: { [BLOCK.instruction]: say.modalNotUnderstood() } });
      return;
    }
    const { view, user } = parsed.data;
    const value = (block: string) => view.state.values[block]?.[INPUT_ACTION];
    const instruction = (value(BLOCK.instruction)?.value ?? '').trim();
    const messageText = value(BLOCK.message)?.value ?? '';
    const channel = value(BLOCK.channel)?.selected_conversation ?? '';

    const errors: Errors = {};
    const length = mrkdwnToPlain(instruction).length;
    if (!instruction) errors.instruction = say.modalNoInstruction();
    else if (length > deps.config.maxPromptChars)
      errors.instruction = say.modalTooLong(length, deps.config.maxPromptChars);
    const allowed = deps.config.access.allowedChannelIds;
    if (!channel) errors.channel = say.modalNoChannel();
    else if (channel.startsWith('D')) errors.channel = say.modalDirect();
    else if (allowed && !allowed.has(channel)) errors.channel = say.modalChannelNotAllowed(channel);
    else {
      const known = await facts(deps, channel);
      if (known === 'missing') errors.channel = say.modalChannelMissing();
      else if (known?.isArchived) errors.channel = say.modalArchived(channel);
      else if (known && !known.isMember) errors.channel = say.modalNotMember(channel);
    }
    const inPlace = channel === metadata.channel;
    if (!errors.channel && inPlace) {
      const existing = await deps.store.findJobByThread(channel, metadata.threadTs ?? metadata.ts);
      if (existing) errors.channel = say.modalThreadHasJob();
    }
    if (Object.keys(errors).length > 0) {
      await ack({ response_action: 'errors', errors });
      return;
    }

    let jobId: number | undefined;
    try {
      const author = metadata.author.startsWith('U')
        ? ((await deps.names.of([metadata.author])).get(metadata.author) ?? metadata.author)
        : metadata.author;
      jobId = await deps.jobs.acceptShortcut({
        teamId: user.team_id ?? parsed.data.team?.id ?? '',
        userId: user.id,
        channelId: channel,
        instruction,
        message: {
          channelId: metadata.channel,
          ts: metadata.ts,
          threadTs: metadata.threadTs,
          text: messageText,
          author,
        },
        permalink: metadata.permalink,
        viewId: view.id,
      });
    } catch (error) {
      deps.logger.error('could not record a shortcut submission', { error });
      await ack({ response_action: 'errors', errors: { [BLOCK.instruction]: say.notRecorded() } });
      return;
    }
    await ack();
    if (jobId !== undefined) {
      const id = jobId;
      deps.tasks.run('start job', () => deps.jobs.startJob(id));
    }
  };
}
