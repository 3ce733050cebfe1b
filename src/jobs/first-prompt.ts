import type { AccessPolicy } from '../access/access-policy.js';
import type { RenderHints } from '../blocks/messages.js';
import { BOT_EVENT_TYPES } from '../delivery/outbox-items.js';
import type { Logger } from '../logging/logger.js';
import type { SlackGateway } from '../slack/gateway.js';
import type { ThreadMessage } from '../slack/message-listing.js';
import { isAside } from '../slack/messages.js';
import { mrkdwnToPlain } from '../slack/mrkdwn.js';
import type { UserNames } from '../slack/user-names.js';
import type { JobRecord, RunRecord } from '../store/types.js';
import { CONTEXT_MESSAGES_READ, contextLines, peopleIn, withContext } from './thread-context.js';

/** Most distinct authors of a thread checked for context; messages of any others are withheld. */
export const CONTEXT_AUTHORS_CHECKED = 50;

export function createFirstPrompt(deps: {
  /** Who could instruct the agent: only their messages are context. */
  access: Pick<AccessPolicy, 'mayInstruct'>;
  /** The aside marker: asides stay out of the context too. */
  hints: Pick<RenderHints, 'asideMarker'>;
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
  /**
   * The messages whose authors could have instructed the agent themselves: a thread must not be
   * a way to hand the agent words from a guest, another organisation or someone not on
   * `ALLOWED_USER_IDS`. When Slack cannot say, the message is withheld.
   */
  async function byPeopleWhoMayInstruct(messages: ThreadMessage[]): Promise<ThreadMessage[]> {
    const key = (m: ThreadMessage) => `${m.user ?? `app:${m.botId ?? ''}`}@${m.team ?? ''}`;
    const authors = [...new Map(messages.map((m) => [key(m), m])).values()].slice(0, CONTEXT_AUTHORS_CHECKED);
    const allowed = new Set<string>();
    await Promise.all(
      authors.map(async (m) => {
        if (await deps.access.mayInstruct({ userId: m.user, teamId: m.team }).catch(() => false))
          allowed.add(key(m));
      }),
    );
    return messages.filter((m) => allowed.has(key(m)));
  }

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
        .filter((m) => Number(m.ts) < Number(contextTs) && !BOT_EVENT_TYPES.has(m.eventType ?? ''))
        // Asides were written for the people in the thread, never for the agent.
        .filter((m) => !isAside(mrkdwnToPlain(m.text), deps.hints.asideMarker));
      const context = await byPeopleWhoMayInstruct(messages);
      const names = await deps.names.of(peopleIn(context));
      return withContext(run.prompt, contextLines(context, names), deps.threadContextMaxChars, {
        withheld: messages.length - context.length,
      });
    } catch (error) {
      logger.warn('could not read the thread for context; starting without it', { jobId: job.id, error });
      return run.prompt;
    }
  };
}
