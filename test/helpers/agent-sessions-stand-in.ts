/**
 * Slack's agent sessions (`agents.sessions.setStatus`, `agents.sessions.rename`) in the Slack
 * stand-in, as Slack documents them: a thread-based session needs `channel_id` and `thread_ts`;
 * `status` is one of `active`, `processing`, `suspended`, `closed`; setStatus creates the session
 * when it does not exist, and its `title` (at most 200 characters) and `initiator_user_id` are
 * used only then; rename takes a title of 1 to 200 characters. The initiator "must be a member of
 * the channel": one who is not is refused, when the session is made, with `user_not_in_channel`
 * (Slack does not name the error; this is the code it gives elsewhere for a person not in a channel).
 */

export interface StandInSession {
  channel: string;
  threadTs: string;
  status: string;
  title: string | undefined;
  initiator: string | undefined;
  /** Every status set, in order. */
  history: string[];
}

const STATUSES = new Set(['active', 'processing', 'suspended', 'closed']);
const TITLE_MAX = 200;

export function agentSessionsStandIn() {
  const sessions = new Map<string, StandInSession>();
  /** People who are not members of a channel, as `channel:user`. */
  const outsiders = new Set<string>();
  const key = (channel: unknown, threadTs: unknown) => `${channel}:${threadTs}`;
  const thread = (args: Record<string, unknown>) =>
    typeof args.channel_id === 'string' && typeof args.thread_ts === 'string'
      ? { channel: args.channel_id, threadTs: args.thread_ts }
      : undefined;
  const invalid = { ok: false, error: 'invalid_arguments' };

  const methods: Record<string, (args: Record<string, unknown>) => Record<string, unknown>> = {
    'agents.sessions.setStatus': (args) => {
      const at = thread(args);
      const status = String(args.status ?? '');
      if (!at || !STATUSES.has(status)) return invalid;
      if (args.title !== undefined && (typeof args.title !== 'string' || [...args.title].length > TITLE_MAX))
        return invalid;
      const existing = sessions.get(key(at.channel, at.threadTs));
      if (existing) {
        existing.status = status;
        existing.history.push(status);
      } else {
        if (
          typeof args.initiator_user_id === 'string' &&
          outsiders.has(key(at.channel, args.initiator_user_id))
        )
          return { ok: false, error: 'user_not_in_channel' };
        sessions.set(key(at.channel, at.threadTs), {
          ...at,
          status,
          title: args.title as string | undefined,
          initiator: args.initiator_user_id as string | undefined,
          history: [status],
        });
      }
      return { ok: true, status };
    },
    'agents.sessions.rename': (args) => {
      const at = thread(args);
      const title = args.title;
      if (!at || typeof title !== 'string' || title.length === 0 || [...title].length > TITLE_MAX)
        return invalid;
      const session = sessions.get(key(at.channel, at.threadTs));
      if (!session) return { ok: false, error: 'session_not_found' };
      session.title = title;
      return { ok: true, title };
    },
  };

  return {
    methods,
    /** Every session, by `channel:threadTs`. */
    sessions,
    /** People who are not members of a channel, as `channel:user` (everyone else is). */
    outsiders,
    /** The session of a thread, if the bot made one. */
    sessionOf: (channel: string, threadTs: string) => sessions.get(key(channel, threadTs)),
  };
}
