import type { WebClient } from '@slack/web-api';
import type { SessionStatus } from '../domain/agent-session.js';
import type { Logger } from '../logging/logger.js';
import type { Redact } from './redaction.js';
import { slackCaller } from './slack-errors.js';

/** Longest session title Slack takes (`agents.sessions.setStatus`, `agents.sessions.rename`). */
export const SESSION_TITLE_MAX_CHARS = 200;

/** Slack's agent sessions (`agents.sessions.*`): a thread's status, title and initiator. */
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
  rename(args: { channel: string; threadTs: string; title: string }): Promise<void>;
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
  const slackCall = slackCaller(logger, onError);
  const call = async (method: string, fn: () => Promise<unknown>): Promise<void> => {
    await slackCall(method, fn);
  };
  return {
    setStatus: ({ channel, threadTs, status, title, initiator }) =>
      call('agents.sessions.setStatus', () =>
        client.agents.sessions.setStatus({
          channel_id: channel,
          thread_ts: threadTs,
          status,
          ...(title ? { title: redact(title) } : {}),
          ...(initiator ? { initiator_user_id: initiator } : {}),
        }),
      ),
    rename: ({ channel, threadTs, title }) =>
      call('agents.sessions.rename', () =>
        client.agents.sessions.rename({ channel_id: channel, thread_ts: threadTs, title: redact(title) }),
      ),
  };
}
