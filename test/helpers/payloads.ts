import { TEAM_ID } from './slack-stand-in.js';

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
  return JSON.stringify({
    token: 'legacy-verification-token',
    team_id: TEAM_ID,
    api_app_id: 'A0APP',
    type: 'event_callback',
    event_id: envelope.event_id ?? `Ev${unique()}`,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [{ team_id: TEAM_ID, user_id: 'U0BOT', is_bot: true }],
    event: {
      type: 'message',
      channel: 'C0GENERAL',
      user: 'U0ALICE',
      text: 'Also cover async usage',
      channel_type: 'channel',
      event_ts: ts,
      ...fields,
      ts,
    },
  });
}
