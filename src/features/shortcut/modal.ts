import { text } from '../../blocks/messages.js';
import { type Block, context, LIMITS, plain } from '../../slack/blocks.js';
import { isDirectMessage, isUserId } from '../../slack/ids.js';
import { checkUrl } from '../../slack/links.js';
import {
  channelMention,
  escapeMrkdwn,
  link,
  md,
  mrkdwnToPlain,
  truncateText,
  userMention,
} from '../../slack/mrkdwn.js';

/** The message shortcut ("Send to docs agent") and its modal. */
export const SHORTCUT_CALLBACK_ID = 'send_to_docs_agent';
export const MODAL_CALLBACK_ID = 'send_to_docs_agent_modal';
export const BLOCK = { instruction: 'instruction', message: 'message', channel: 'channel' } as const;
/** Every input's element carries this action id; values are read by block id. */
export const INPUT_ACTION = 'value';
/** Longest text a modal input holds. */
const INPUT_MAX = 3_000;

/** What the modal remembers about the message between opening and submission. */
export interface ModalMetadata {
  channel: string;
  ts: string;
  threadTs?: string;
  /** Author's user id, or the app's name for a bot message. */
  author: string;
  permalink?: string;
  /** Files the message carries, by name and type (at most {@link MODAL_FILES}, names shortened). */
  files?: { name: string; type: string }[];
}

/** Most files of the message the modal remembers: private metadata holds 3,000 characters. */
export const MODAL_FILES = 10;

/** The message's files as the modal remembers them: few, with short names. */
export const modalFiles = (files: readonly { name: string; type: string }[]) =>
  files
    .slice(0, MODAL_FILES)
    .map((f) => ({ name: truncateText(f.name, 100), type: truncateText(f.type, 50) }));

export function sendModal(args: {
  message: { text: string; author: string };
  metadata: ModalMetadata;
  maxPromptChars: number;
}): Record<string, unknown> {
  const { metadata } = args;
  // A bot message's author is the app's own name: any text, so it is shown escaped.
  const from = isUserId(args.message.author)
    ? userMention(args.message.author)
    : escapeMrkdwn(args.message.author);
  const permalink = checkUrl(metadata.permalink);
  const source = permalink ? link(permalink, 'This message') : md`This message`;
  const blocks: Block[] = [
    {
      type: 'input',
      block_id: BLOCK.instruction,
      label: plain('What should the docs agent do?', LIMITS.inputLabel),
      element: {
        type: 'plain_text_input',
        action_id: INPUT_ACTION,
        multiline: true,
        max_length: Math.min(INPUT_MAX, args.maxPromptChars),
        placeholder: plain('e.g. Turn this answer into a FAQ entry on the authentication page', 150),
      },
    },
    {
      type: 'input',
      block_id: BLOCK.message,
      optional: true,
      label: plain('Message sent with it as context', LIMITS.inputLabel),
      hint: plain('Edit it to leave out what the agent should not see.', 2_000),
      element: {
        type: 'plain_text_input',
        action_id: INPUT_ACTION,
        multiline: true,
        max_length: INPUT_MAX,
        ...(args.message.text.trim()
          ? { initial_value: truncateText(mrkdwnToPlain(args.message.text), INPUT_MAX) }
          : {}),
      },
    },
    context(md`${source} by ${from} in ${channelMention(metadata.channel)}`),
    // Said before the job starts: the agent gets the files' names, never their contents.
    ...(metadata.files?.length ? [context(text.filesUnseen(metadata.files))] : []),
    {
      type: 'input',
      block_id: BLOCK.channel,
      label: plain('Run the job in', LIMITS.inputLabel),
      hint: plain(
        'Keep the message’s channel to run the job in the message’s thread, or pick a channel I am in.',
        2_000,
      ),
      element: {
        type: 'conversations_select',
        action_id: INPUT_ACTION,
        // A direct message cannot host a job: leave the choice to the person.
        ...(isDirectMessage(metadata.channel) ? {} : { initial_conversation: metadata.channel }),
        filter: { include: ['public', 'private'], exclude_bot_users: true },
      },
    },
  ];
  return {
    type: 'modal',
    callback_id: MODAL_CALLBACK_ID,
    title: plain('Send to docs agent', LIMITS.viewTitle),
    submit: plain('Start job', LIMITS.viewTitle),
    close: plain('Cancel', LIMITS.viewTitle),
    private_metadata: JSON.stringify(metadata).slice(0, LIMITS.privateMetadata),
    blocks,
  };
}

/**
 * Errors shown under the modal's inputs. Slack shows them as plain text (it parses no markup
 * there), so they are plain strings and name channels in words.
 */
export const modalText = {
  notUnderstood: () => 'I could not read this form. Close it and use the shortcut again.',
  noInstruction: () => 'Write what the docs agent should do.',
  tooLong: (length: number, max: number) =>
    `That is ${length.toLocaleString('en-US')} characters; the limit is ${max.toLocaleString('en-US')}. Shorten it, or send the rest as a follow-up in the job’s thread.`,
  noChannel: () => 'Pick the channel to run the job in.',
  direct: () => 'Jobs run in channels, where everyone can follow the thread. Pick a channel.',
  channelNotAllowed: () =>
    'The docs agent is not enabled in that channel. Pick another channel, or ask an admin which channels it serves.',
  channelMissing: () => 'I cannot see that channel. Pick a channel I am a member of.',
  archived: () => 'That channel is archived. Pick another channel.',
  notMember: () =>
    'I am not a member of that channel, so I cannot post the job there. Invite me with /invite @docs-agent, or pick another channel.',
  threadHasJob: () =>
    'This message’s thread already has a docs agent job: reply in that thread to send it a follow-up, or pick another channel to start a new job.',
  notRecorded: () =>
    'I could not record that instruction, so nothing was started. Please try again in a moment.',
};
