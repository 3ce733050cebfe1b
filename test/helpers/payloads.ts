import { BOT_USER_ID, TEAM_ID } from './slack-stand-in.js';

let counter = 0;
const unique = () => `${Date.now()}${++counter}`;

export interface CommandFields {
  text?: string;
  user_id?: string;
  channel_id?: string;
  team_id?: string;
  trigger_id?: string;
  response_url?: string;
  command?: string;
  channel_name?: string;
}

/** A slash command body, form-encoded as Slack sends it. */
export function slashCommand(fields: CommandFields = {}): string {
  return new URLSearchParams({
    token: 'legacy-verification-token',
    team_id: TEAM_ID,
    team_domain: 'test',
    channel_id: 'C0GENERAL',
    channel_name: 'general',
    user_id: 'U0ALICE',
    user_name: 'alice',
    command: '/docs-agent',
    text: 'Add a quickstart for the Python SDK',
    api_app_id: 'A0APP',
    trigger_id: `trigger.${unique()}`,
    ...fields,
  } as Record<string, string>).toString();
}

export interface MessageFields {
  channel?: string;
  user?: string;
  text?: string;
  ts?: string;
  thread_ts?: string;
  subtype?: string;
  bot_id?: string;
  [key: string]: unknown;
}

/** An Events API envelope around a `message` event. */
export function messageEvent(fields: MessageFields, envelope: { event_id?: string } = {}): string {
  const ts = fields.ts ?? `1700000100.${String(++counter).padStart(6, '0')}`;
  return eventEnvelope(
    {
      type: 'message',
      channel: 'C0GENERAL',
      user: 'U0ALICE',
      text: 'Also cover async usage',
      channel_type: 'channel',
      event_ts: ts,
      ...fields,
      ts,
    },
    envelope,
  );
}

/** An Events API envelope around any event. */
export function eventEnvelope(event: Record<string, unknown>, envelope: { event_id?: string } = {}): string {
  return JSON.stringify({
    token: 'legacy-verification-token',
    team_id: TEAM_ID,
    api_app_id: 'A0APP',
    type: 'event_callback',
    event_id: envelope.event_id ?? `Ev${unique()}`,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [{ team_id: TEAM_ID, user_id: BOT_USER_ID, is_bot: true }],
    event,
  });
}

/** An `app_mention` event: `text` should carry `<@U0BOT>`. */
export function appMention(fields: {
  text: string;
  ts?: string;
  thread_ts?: string;
  channel?: string;
  user?: string;
}) {
  const ts = fields.ts ?? `1700000200.${String(++counter).padStart(6, '0')}`;
  return { type: 'app_mention', channel: 'C0GENERAL', user: 'U0ALICE', event_ts: ts, ...fields, ts };
}

/** An interactivity request body: `payload=<json>`, form-encoded as Slack sends it. */
export function interaction(payload: Record<string, unknown>): string {
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
}

/** A message shortcut ("Send to docs agent") on a message. */
export function messageShortcut(
  message: { ts: string; text: string; user?: string; thread_ts?: string; files?: unknown[] },
  channel = 'C0GENERAL',
) {
  return {
    type: 'message_action',
    callback_id: 'send_to_docs_agent',
    trigger_id: `trigger.${unique()}`,
    action_ts: String(Date.now() / 1000),
    team: { id: TEAM_ID, domain: 'test-team' },
    user: { id: 'U0ALICE', username: 'alice', team_id: TEAM_ID },
    channel: { id: channel, name: 'general' },
    message: { type: 'message', user: 'U0BOB', ...message },
    response_url: 'https://hooks.slack.test/actions/1',
    token: 'legacy-verification-token',
  };
}

/** The modal's submission, with the values a person left in it. */
export function viewSubmission(
  view: Record<string, unknown>,
  values: { instruction?: string; message?: string; channel?: string | null },
  viewId = `V${unique()}`,
) {
  return {
    type: 'view_submission',
    team: { id: TEAM_ID, domain: 'test-team' },
    user: { id: 'U0ALICE', team_id: TEAM_ID },
    api_app_id: 'A0APP',
    token: 'legacy-verification-token',
    trigger_id: `trigger.${unique()}`,
    view: {
      ...view,
      id: viewId,
      team_id: TEAM_ID,
      state: {
        values: {
          instruction: { value: { type: 'plain_text_input', value: values.instruction ?? null } },
          message: { value: { type: 'plain_text_input', value: values.message ?? null } },
          channel: { value: { type: 'conversations_select', selected_conversation: values.channel ?? null } },
        },
      },
    },
  };
}

/** A `/docs-agent` command as Socket Mode delivers it (an object, not a form body). */
export function socketSlashCommand(
  responseUrl: string,
  text = 'Explain rate limits',
): Record<string, unknown> {
  return {
    team_id: TEAM_ID,
    channel_id: 'C0GENERAL',
    user_id: 'U0ALICE',
    command: '/docs-agent',
    text,
    trigger_id: `trigger.socket.${unique()}`,
    response_url: responseUrl,
  };
}

/**
 * A `message_changed` event: `message` is the message as it is now (edited once, at
 * `edited_ts`), `previous` its text before.
 */
export function messageChanged(fields: {
  channel?: string;
  ts: string;
  thread_ts?: string;
  user?: string;
  text: string;
  previous: string;
  edited_ts?: string;
  bot_id?: string;
  files?: unknown[];
}) {
  const { channel = 'C0GENERAL', previous, edited_ts, user = 'U0ALICE', ...message } = fields;
  const eventTs = edited_ts ?? `1700000400.${String(++counter).padStart(6, '0')}`;
  return {
    type: 'message',
    subtype: 'message_changed',
    hidden: true,
    channel,
    ts: eventTs,
    event_ts: eventTs,
    message: { type: 'message', user, ...message, edited: { user, ts: eventTs } },
    previous_message: { type: 'message', user, ts: message.ts, text: previous },
  };
}

/** A `message_deleted` event for a message of `user`. */
export function messageDeleted(fields: {
  channel?: string;
  ts: string;
  thread_ts?: string;
  user?: string;
  text?: string;
}) {
  const { channel = 'C0GENERAL', ts, user = 'U0ALICE', ...previous } = fields;
  const eventTs = `1700000500.${String(++counter).padStart(6, '0')}`;
  return {
    type: 'message',
    subtype: 'message_deleted',
    hidden: true,
    channel,
    ts: eventTs,
    event_ts: eventTs,
    deleted_ts: ts,
    previous_message: { type: 'message', user, ts, text: previous.text ?? 'gone', ...previous },
  };
}

/**
 * A deletion as Slack's documentation shows it: the deleted message's ts, and nothing about the
 * message itself (no `previous_message`).
 */
export function minimalDeletion(channel: string, deletedTs: string) {
  const eventTs = `1700000500.${String(++counter).padStart(6, '0')}`;
  return {
    type: 'message',
    subtype: 'message_deleted',
    hidden: true,
    channel,
    ts: eventTs,
    deleted_ts: deletedTs,
    event_ts: eventTs,
  };
}

/** A click on a button of a bot message (`block_actions`), as Slack sends it. */
export function buttonClick(
  button: { action_id: string; value: string },
  where: { channel?: string; messageTs: string; user?: string; responseUrl?: string },
) {
  const channel = where.channel ?? 'C0GENERAL';
  return {
    type: 'block_actions',
    team: { id: TEAM_ID, domain: 'test-team' },
    user: { id: where.user ?? 'U0ALICE', username: 'alice', team_id: TEAM_ID },
    api_app_id: 'A0APP',
    token: 'legacy-verification-token',
    trigger_id: `trigger.${unique()}`,
    container: { type: 'message', message_ts: where.messageTs, channel_id: channel, is_ephemeral: false },
    channel: { id: channel, name: 'general' },
    message: { type: 'message', ts: where.messageTs, bot_id: 'B0BOT' },
    response_url: where.responseUrl ?? 'https://hooks.slack.test/actions/1',
    actions: [
      {
        type: 'button',
        block_id: 'card',
        action_ts: String(Date.now() / 1000),
        text: { type: 'plain_text', text: 'Try again' },
        ...button,
      },
    ],
  };
}

/** Alice's direct message with the bot, where the assistant pane's threads are. */
export const PANE_DM = 'D0ALICE';

/**
 * The assistant pane opened (`started`) or moved beside another channel (`context_changed`), as
 * Slack's documentation shows the event: the thread `threadTs` of Alice's direct message with the
 * bot, beside `context` (a channel of the test workspace, or the context object as sent);
 * `thread` overrides the thread's fields, `eventTs` says when (default: now).
 */
export function paneEvent(
  type: 'started' | 'context_changed',
  threadTs: string,
  context: string | Record<string, unknown> = {},
  options: { thread?: Record<string, unknown> | undefined; eventTs?: unknown } = {},
) {
  return {
    type: `assistant_thread_${type}`,
    assistant_thread: {
      user_id: 'U0ALICE',
      channel_id: PANE_DM,
      thread_ts: threadTs,
      context: typeof context === 'string' ? { channel_id: context, team_id: TEAM_ID } : context,
      ...options.thread,
    },
    event_ts: options.eventTs ?? String(Date.now() / 1000),
  };
}

/** Alice's message in her direct message with the bot, as the Events API delivers it (in the thread `threadTs`, if given). */
export const paneMessage = (ts: string, text: string, threadTs?: string) => ({
  type: 'message',
  channel: PANE_DM,
  channel_type: 'im',
  user: 'U0ALICE',
  text,
  ts,
  event_ts: ts,
  ...(threadTs ? { thread_ts: threadTs } : {}),
});
