import type { WebClient } from '@slack/web-api';
import type { SessionStatus } from '../domain/agent-session.js';
import type { Logger } from '../logging/logger.js';
import type { Redact } from './redaction.js';
import { slackCaller } from './slack-errors.js';

/** Longest session title Slack takes (`agents.sessions.setStatus`). */
export const SESSION_TITLE_MAX_CHARS = 200;

/**
 * Slack's agent sessions (`agents.sessions.setStatus`): a thread's status, title and initiator.
 * The title is set once, when the session is made; it is never renamed (`agents.sessions.rename`).
 */
export interface AgentSessions {
  /**
   * Sets the thread's session status, creating the session if need be; `title` and `initiator`
   * are only used when it is created.
   */
  setStatus(args: {
    channel: string;
    threadTs: string;
    status: SessionStatus;
    title?: string;
    initiator?: string;
  }): Promise<void>;
}

export function createAgentSessions({
  client,
  logger,
  redact,
  onError,
}: {
  client: WebClient;
  logger: Logger;
  /** Masks secrets in titles, as every text the bot sends to Slack. */
  redact: Redact;
  onError?: (method: string, code: string) => void;
}): AgentSessions {
  const call = slackCaller(logger, onError);
  return {
    async setStatus({ channel, threadTs, status, title, initiator }) {
      await call('agents.sessions.setStatus', () =>
        client.agents.sessions.setStatus({
          channel_id: channel,
          thread_ts: threadTs,
          status,
          ...(title ? { title: redact(title) } : {}),
          ...(initiator ? { initiator_user_id: initiator } : {}),
        }),
      );
    },
  };
}
