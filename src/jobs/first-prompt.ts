import type { Logger } from '../logger.js';
import type { SlackGateway } from '../slack/gateway.js';
import type { UserNames } from '../slack/user-names.js';
import type { JobRecord, RunRecord } from '../store/types.js';
import { BOT_EVENT_TYPES } from './outbox-items.js';
import { CONTEXT_MESSAGES_READ, contextLines, peopleIn, withContext } from './thread-context.js';

export function createFirstPrompt(deps: {
  slack: SlackGateway;
  names: UserNames;
  logger: Logger;
  /** Most characters of thread context in a first prompt; 0 gives none. */
  threadContextMaxChars: number;
}) {
  const { slack, logger } = deps;
  /**
   * The first prompt: the instruction, and for a job started inside a thread the thread's
   * earlier messages as context. Context is a courtesy: if Slack cannot give it, the job starts
   * without it.
   */
  return async function firstPrompt(job: JobRecord, run: RunRecord): Promise<string> {
    if (!job.contextTs || !job.threadTs || deps.threadContextMaxChars === 0) return run.prompt;
    try {
      const contextTs = job.contextTs;
      const messages = (
        await slack.threadMessages({
          channel: job.channelId,
          threadTs: job.threadTs,
          limit: CONTEXT_MESSAGES_READ,
          latest: contextTs,
        })
      )
        // Messages before the mention, without the bot's own cards and notices (they carry its metadata).
        .filter((m) => Number(m.ts) < Number(contextTs) && !BOT_EVENT_TYPES.has(m.eventType ?? ''));
      const names = await deps.names.of(peopleIn(messages));
      return withContext(run.prompt, contextLines(messages, names), deps.threadContextMaxChars);
    } catch (error) {
      logger.warn('could not read the thread for context; starting without it', { jobId: job.id, error });
      return run.prompt;
    }
  };
}
