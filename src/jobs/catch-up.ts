import type { RenderHints } from '../blocks/messages.js';
import type { Logger } from '../logging/logger.js';
import type { SlackGateway } from '../slack/gateway.js';
import { followUpText, isHumanMessage } from '../slack/messages.js';
import type { JobRecord } from '../store/types.js';
import type { ReplyRequest } from './requests.js';
import { CONTEXT_MESSAGES_READ } from './thread-context.js';

/**
 * Replies posted in a mention's thread before its job was recorded were seen as replies in a
 * thread with no job (Slack may deliver a mention late, after a retry). Once the job exists,
 * they are read back from the thread and recorded as follow-ups; the store recognizes any it
 * already has by their ts.
 */
export function createReplyCatchUp(deps: {
  slack: SlackGateway;
  logger: Logger;
  hints: RenderHints;
  botUserId: () => Promise<string | undefined>;
  accept: (request: ReplyRequest) => Promise<number | undefined>;
  process: (runId: number, teamId: string | undefined) => Promise<void>;
}) {
  /** Records the human replies in the job's thread posted after `afterTs` and before `beforeTs`. */
  return async function catchUp(job: JobRecord, afterTs: string, beforeTs: string): Promise<void> {
    if (!job.threadTs) return;
    try {
      const botUserId = await deps.botUserId();
      const messages = await deps.slack.threadMessages({
        channel: job.channelId,
        threadTs: job.threadTs,
        limit: CONTEXT_MESSAGES_READ,
        oldest: afterTs,
        latest: beforeTs,
      });
      for (const m of messages) {
        if (Number(m.ts) <= Number(afterTs) || Number(m.ts) >= Number(beforeTs)) continue;
        // The same rule as a reply arriving live: joins, topic changes and the like are no replies.
        if (!m.user || m.botId || m.eventType || m.user === botUserId || !isHumanMessage(m)) continue;
        const text = followUpText(m.text, { botUserId, ...deps.hints });
        if (text === undefined) continue;
        const runId = await deps.accept({
          teamId: m.team ?? job.teamId,
          channelId: job.channelId,
          threadTs: job.threadTs,
          messageTs: m.ts,
          userId: m.user,
          text,
        });
        if (runId !== undefined) {
          deps.logger.info('reply posted before its job was recorded taken as a follow-up', {
            jobId: job.id,
          });
          await deps.process(runId, m.team);
        }
      }
    } catch (error) {
      deps.logger.warn('could not read the thread for replies posted before the job', {
        jobId: job.id,
        error,
      });
    }
  };
}
