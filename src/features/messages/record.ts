import { triggerKeys } from '../../domain/keys.js';
import { recordCounted } from '../../http/not-recorded.js';
import type { MetricsHooks } from '../../jobs/metrics-hooks.js';
import type { MentionOutcome, MentionRequest } from '../../jobs/requests.js';
import { channelPrivacy, type JobRecording } from '../../jobs/start/accept.js';

/**
 * A message to the bot in a direct message: at the top (a new job whose thread is the message)
 * or in a thread (the assistant pane's, or under an earlier message). The same facts as a
 * mention: `channelId` is the direct message conversation (`D…`).
 */
export type DirectRequest = MentionRequest;

/** What recording a message works with: what it reports (and the job kernel's recording). */
export interface MessageRecordDeps {
  metrics: Pick<MetricsHooks, 'instruction'>;
}

/**
 * Records a mention: a new job in its thread, or, where the thread already has a job, a
 * follow-up to it. Undefined when it is a repeat.
 */
export function recordMention(
  deps: MessageRecordDeps & { jobs: Pick<JobRecording, 'recordMessage'> },
  request: MentionRequest,
): Promise<MentionOutcome> {
  return recordCounted(deps.metrics, 'mention', () =>
    deps.jobs.recordMessage(request, {
      origin: 'mention',
      triggerKey: triggerKeys.mention(request.channelId, request.messageTs),
      // The earlier messages of the thread it was posted in are the job's context.
      contextTs: request.threadTs ? request.messageTs : null,
      privacy: channelPrivacy(request.channelId),
      contextChannelId: null,
    }),
  );
}

/**
 * Records a direct message to the bot the same way: a new job whose thread is the message (or
 * the thread it was posted in, such as the assistant pane's), or a follow-up where that thread
 * has a job. In the assistant pane opened beside a channel, that channel is recorded with the
 * job: it runs on that channel's project and is checked against that channel, wherever the
 * pane is by then. Undefined when it is a repeat, or has no text.
 */
export function recordDirect(
  deps: MessageRecordDeps & { jobs: Pick<JobRecording, 'recordMessage' | 'usePane'> },
  request: DirectRequest,
): Promise<MentionOutcome> {
  return recordCounted(deps.metrics, 'direct', async () => {
    const pane = await deps.jobs.usePane(request.channelId, request.threadTs);
    return deps.jobs.recordMessage(request, {
      origin: 'direct',
      triggerKey: triggerKeys.direct(request.channelId, request.messageTs),
      // A conversation with the bot itself: nothing in it is context someone else gave.
      contextTs: null,
      privacy: pane ? 'pane' : 'direct',
      // The assistant pane opened beside a channel works for that channel, as it is now.
      contextChannelId: pane?.contextChannelId ?? null,
    });
  });
}
