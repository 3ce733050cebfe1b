import type { RenderHints } from '../blocks/messages.js';
import { channelNotification, requesterMessage } from '../blocks/notifications.js';
import type { Config } from '../config/config.js';
import { outcomeNotification } from '../delivery/outbox-items.js';
import type { Logger } from '../logging/logger.js';
import { isDirectMessage } from '../slack/ids.js';
import type { JobRecord, NewOutboxItem, RunOutcome, RunRecord } from '../store/types.js';
import type { JobSettings } from './job-context.js';
import type { JobPrivacyChecks } from './job-privacy.js';

/**
 * Where a run's outcome is told besides its thread: `NOTIFY_ON` (`pr` or `all`),
 * `NOTIFY_REQUESTER` (`thread` or `dm`) and `NOTIFY_PRIVATE_JOBS`, with the channel of each
 * project resolved.
 */
export type NotifySettings = Pick<Config['notify'], 'on' | 'requester' | 'privateJobs'> & {
  /** The notification channel of a job's project (null: the default project), if it has one. */
  channelFor: (projectId: string | null) => string | undefined;
  /** The workspace's address (auth.test `url`), for links to a job's thread; undefined while unknown. */
  workspaceUrl: () => Promise<string | undefined>;
};

/**
 * The items that tell a run's outcome outside its thread, queued in the same store write as
 * the thread's outcome post (so a crash never keeps one without the other): a short post in the
 * project's notification channel when the run opened a pull request (every outcome with
 * `NOTIFY_ON=all`), and a direct message to the requester with `NOTIFY_REQUESTER=dm`.
 */
export async function outcomeNotifications(
  ctx: {
    notify?: NotifySettings | undefined;
    hints: RenderHints;
    settings: JobSettings;
    logger: Logger;
    privacy: Pick<JobPrivacyChecks, 'recheck'>;
  },
  outcome: RunOutcome,
  recorded: JobRecord,
  run: RunRecord,
): Promise<NewOutboxItem[]> {
  const { notify } = ctx;
  if (!notify) return [];
  const channel =
    outcome === 'completed_pr' || notify.on === 'all' ? notify.channelFor(recorded.projectId) : undefined;
  // Told in another channel: a channel made private since the job was asked keeps its words.
  // (Background work: the poller's, never an acknowledgement; the lookup has a time limit.)
  const job = channel && channel !== recorded.channelId ? await ctx.privacy.recheck(recorded) : recorded;
  // A job started in a direct message already tells its requester there, in its own thread.
  const direct = notify.requester === 'dm' && !isDirectMessage(job.channelId);
  if (!channel && !direct) return [];
  // Only for the link to the thread: without it the message names the channel instead.
  const workspaceUrl = await notify.workspaceUrl().catch((error: unknown) => {
    ctx.logger.warn('workspace address unknown; notifications name the channel only', { error });
    return undefined;
  });
  const items: NewOutboxItem[] = [];
  if (channel) {
    const { text } = channelNotification(outcome, job, ctx.hints, workspaceUrl, {
      channel,
      privateJobs: notify.privateJobs,
    });
    items.push(outcomeNotification({ job, run, outcome, to: { channel }, text }));
  }
  if (direct) {
    const { text, blocks } = requesterMessage(
      outcome,
      job,
      ctx.hints,
      ctx.settings.poll.maxAgeMs,
      workspaceUrl,
    );
    items.push(outcomeNotification({ job, run, outcome, to: { user: job.requesterId }, text, blocks }));
  }
  return items;
}
