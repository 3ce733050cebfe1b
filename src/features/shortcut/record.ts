import type { Config } from '../../config/config.js';
import { triggerKeys } from '../../domain/keys.js';
import { recordCounted } from '../../http/not-recorded.js';
import type { MetricsHooks } from '../../jobs/metrics-hooks.js';
import { channelPrivacy, type JobRecording } from '../../jobs/start/accept.js';
import { withContext, withFiles } from '../../jobs/thread-context.js';
import type { ChannelAudience } from '../../slack/directory.js';
import type { SharedFile } from '../../slack/messages.js';
import { mrkdwnToPlain } from '../../slack/mrkdwn.js';

/** The message shortcut's modal, submitted and validated. */
export interface ShortcutRequest {
  teamId: string;
  userId: string;
  /** Where the job runs: the message's own channel (then in its thread) or one the user picked. */
  channelId: string;
  /** The instruction typed in the modal, Slack-encoded (`&`, `<`, `>` escaped) like a command's. */
  instruction: string;
  /** The message the shortcut was used on, as the user left it in the modal (Slack-encoded). */
  message: {
    channelId: string;
    ts: string;
    threadTs: string | undefined;
    text: string;
    author: string;
    /** Files the message carries: the agent gets their names only (the modal said so). */
    files?: SharedFile[];
  };
  permalink: string | undefined;
  /** The modal's view id: unique per submission. */
  viewId: string;
  /** Who can read the chosen channel, as Slack said when the modal was submitted; undefined: asked again. */
  audience?: ChannelAudience | undefined;
}

/** What recording a submission works with: the job kernel's recording, and what it reports. */
export interface ShortcutRecordDeps {
  jobs: Pick<JobRecording, 'recordJob'>;
  config: Pick<Config, 'threadContextMaxChars'>;
  metrics: Pick<MetricsHooks, 'instruction'>;
}

/**
 * Records a shortcut submission: the new job's id; `repeat` for the same submission again;
 * `thread_taken` when the message's thread already has a job (nothing recorded). The agent is
 * given the instruction with the message as its context.
 */
export function recordShortcut(
  deps: ShortcutRecordDeps,
  request: ShortcutRequest,
): Promise<{ job: number } | 'repeat' | 'thread_taken'> {
  return recordCounted(deps.metrics, 'shortcut', async () => {
    const { message } = request;
    const inPlace = request.channelId === message.channelId;
    const lines = message.text.trim()
      ? [{ author: message.author, text: mrkdwnToPlain(message.text).trim() }]
      : [];
    const prompt = withFiles(
      withContext(
        mrkdwnToPlain(request.instruction).trim(),
        lines,
        // The message is what the user chose to send (at most 3,000 characters in the modal).
        Math.max(deps.config.threadContextMaxChars, 3_000),
        request.permalink ? { link: request.permalink } : {},
      ),
      message.files ?? [],
    );
    const recorded = await deps.jobs.recordJob(
      {
        teamId: request.teamId,
        channelId: request.channelId,
        requesterId: request.userId,
        instruction: request.instruction.trim(),
        triggerKey: triggerKeys.shortcut(request.viewId),
        origin: 'shortcut',
        // In the message's own channel the job lives in its thread; elsewhere it gets a new one.
        threadTs: inPlace ? (message.threadTs ?? message.ts) : null,
        privacy: channelPrivacy(request.channelId, request.audience),
      },
      prompt,
      null,
    );
    if (recorded === 'thread_taken') return recorded;
    return recorded.created ? { job: recorded.job } : 'repeat';
  });
}
