import type { SafeUrl } from './links.js';
import { type Mrkdwn, truncateMrkdwn, truncateText } from './mrkdwn.js';

/**
 * Block Kit builders that keep every text within Slack's documented limits, so a long
 * instruction or repository name shortens instead of making Slack refuse the whole message.
 */

export type Block = Record<string, unknown>;

/** Slack's Block Kit limits (api.slack.com/reference/block-kit). */
export const LIMITS = {
  messageBlocks: 50,
  viewBlocks: 100,
  sectionText: 3_000,
  fieldText: 2_000,
  fields: 10,
  headerText: 150,
  contextElements: 10,
  buttonText: 75,
  url: 3_000,
  buttonValue: 2_000,
  actionElements: 25,
  viewTitle: 24,
  inputLabel: 2_000,
  privateMetadata: 3_000,
  /** chat.postMessage keeps at most this much of `text`; far shorter reads better in notifications. */
  messageText: 4_000,
} as const;

/** A mrkdwn text object: only {@link Mrkdwn} goes in, so nothing unescaped reaches Slack's parser. */
export const mrkdwn = (text: Mrkdwn, max: number = LIMITS.sectionText) => ({
  type: 'mrkdwn',
  text: truncateMrkdwn(text, max),
});

/** A plain_text object: Slack does not parse it, so any string may go in. */
export const plain = (text: string, max: number) => ({
  type: 'plain_text',
  text: truncateText(text, max),
  emoji: true,
});

export const header = (text: string): Block => ({ type: 'header', text: plain(text, LIMITS.headerText) });

export const section = (text: Mrkdwn, accessory?: Block): Block => ({
  type: 'section',
  text: mrkdwn(text),
  ...(accessory ? { accessory } : {}),
});

/** A section of up to ten labelled fields (two columns in Slack). */
export const fieldsSection = (fields: readonly Mrkdwn[]): Block => ({
  type: 'section',
  fields: fields.slice(0, LIMITS.fields).map((f) => mrkdwn(f, LIMITS.fieldText)),
});

export const context = (...texts: Mrkdwn[]): Block => ({
  type: 'context',
  elements: texts.slice(0, LIMITS.contextElements).map((t) => mrkdwn(t)),
});

export const divider = (): Block => ({ type: 'divider' });

/**
 * A button that opens `url` (no interaction payload to handle beyond the acknowledgement). The
 * address is never cut: a shortened address leads somewhere else, so a checked {@link SafeUrl}
 * (at most 3,000 characters) is required.
 */
export const linkButton = (text: string, url: SafeUrl, actionId: string, primary = false): Block => ({
  type: 'button',
  text: plain(text, LIMITS.buttonText),
  url,
  action_id: actionId,
  ...(primary ? { style: 'primary' } : {}),
});

/**
 * A button whose click Slack sends to the app as a `block_actions` interaction, carrying `value`
 * (at most 2,000 characters; the handler must not trust it: anyone who can forge a click can
 * write it).
 */
export const actionButton = (text: string, actionId: string, value: string): Block => ({
  type: 'button',
  text: plain(text, LIMITS.buttonText),
  action_id: actionId,
  value: truncateText(value, LIMITS.buttonValue),
});

export const actions = (...elements: Block[]): Block => ({
  type: 'actions',
  elements: elements.slice(0, LIMITS.actionElements),
});
