import { triggerKeys } from '../../domain/keys.js';
import { recordCounted } from '../../http/not-recorded.js';
import type { MetricsHooks } from '../../jobs/metrics-hooks.js';
import { channelPrivacy, type JobRecording } from '../../jobs/start/accept.js';
import type { Logger } from '../../logging/logger.js';
import type { ChannelAudience } from '../../slack/directory.js';
import { mrkdwnToPlain } from '../../slack/mrkdwn.js';

/** A `/docs-agent <instruction>` command, already validated by its listener. */
export interface StartRequest {
  teamId: string;
  channelId: string;
  userId: string;
  /** The instruction as typed (Slack mrkdwn). */
  text: string;
  /** Slack's trigger id: unique per invocation, so a repeat never starts a second job. */
  triggerId: string;
  responseUrl: string | null;
  /** Who can read the channel, when the command said (`channel_name`); undefined: Slack is asked. */
  audience?: ChannelAudience | undefined;
}

/** What recording a command works with: the job kernel's recording, and what it reports. */
export interface CommandRecordDeps {
  jobs: Pick<JobRecording, 'recordJob'>;
  logger: Logger;
  metrics: Pick<MetricsHooks, 'instruction'>;
}

/**
 * Records a command, fast, before Slack is acknowledged: the new job's id, or undefined when it
 * is a repeat. A command's thread is its status card's, posted once the job starts.
 */
export function recordCommand(deps: CommandRecordDeps, request: StartRequest): Promise<number | undefined> {
  return recordCounted(deps.metrics, 'command', async () => {
    const recorded = await deps.jobs.recordJob(
      {
        teamId: request.teamId,
        channelId: request.channelId,
        requesterId: request.userId,
        instruction: request.text.trim(),
        triggerKey: triggerKeys.command(request.triggerId),
        responseUrl: request.responseUrl,
        privacy: channelPrivacy(request.channelId, request.audience),
      },
      mrkdwnToPlain(request.text).trim(),
      null,
    );
    // A command has no thread yet: only a repeat finds its job recorded before.
    if (recorded === 'thread_taken') return undefined;
    if (!recorded.created) deps.logger.info('repeated command ignored', { jobId: recorded.job });
    return recorded.created ? recorded.job : undefined;
  });
}
