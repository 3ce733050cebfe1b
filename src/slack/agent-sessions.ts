import type { SessionStatus } from '../domain/agent-session.js';
import type { SlackCaller } from './caller.js';

/** Longest session title Slack takes (`agents.sessions.setStatus`). */
export const SESSION_TITLE_MAX_CHARS = 200;

/**
 * Slack's answers that may refuse the session's initiator rather than the session. Slack documents
 * `initiator_user_id` as "a member of the channel" without naming the error a non-member gets, so
 * the codes Slack gives for a person who is not in, or not found in, a conversation elsewhere are
 * taken: `user_not_in_channel` (chat.postEphemeral's word for it), `invalid_initiator`,
 * `invalid_initiator_user_id`, `initiator_not_in_channel`, `user_not_found`, `invalid_user`, and
 * `not_in_channel`. The last may instead mean the bot is not in the channel: then the call without
 * an initiator is refused the same way, for one more call.
 */
const INITIATOR_REFUSED: ReadonlySet<string> = new Set([
  'user_not_in_channel',
  'invalid_initiator',
  'invalid_initiator_user_id',
  'initiator_not_in_channel',
  'user_not_found',
  'invalid_user',
  'not_in_channel',
]);

/** Whether Slack's error `code` may be a refusal of `initiator_user_id` (see {@link INITIATOR_REFUSED}). */
export const mayRefuseInitiator = (code: string): boolean => INITIATOR_REFUSED.has(code);

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

/** Agent sessions through the one caller, which masks the title as every text the bot sends. */
export function createAgentSessions(caller: SlackCaller): AgentSessions {
  return {
    async setStatus({ channel, threadTs, status, title, initiator }) {
      const args = {
        channel_id: channel,
        thread_ts: threadTs,
        status,
        ...(title ? { title } : {}),
        ...(initiator ? { initiator_user_id: initiator } : {}),
      };
      await caller.call('agents.sessions.setStatus', args, (client, masked) =>
        client.agents.sessions.setStatus(masked),
      );
    },
  };
}
