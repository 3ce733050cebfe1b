import { isUserId, SLACK_ID } from './ids.js';
import type { SafeUrl } from './links.js';

/**
 * The rendering boundary. Slack parses message `text`, `mrkdwn` objects and section fields:
 * `<!here>`, `<!channel>`, `<!everyone>` and `<!subteam^…>` notify people, `<@U…>` mentions one,
 * and `<url|label>` shows any label for any address. Text from a person, the agent API or the
 * store must never be able to write those. Everything the bot sends as mrkdwn is therefore a
 * {@link Mrkdwn}, which only the builders below produce: a raw string put into a block or a
 * message text is a type error, and every builder escapes what it did not write itself.
 */
declare const mrkdwnBrand: unique symbol;
export type Mrkdwn = string & { readonly [mrkdwnBrand]: true };

/** Marks text this module built (or checked) as safe. The only cast to {@link Mrkdwn}. */
const built = (text: string) => text as Mrkdwn;

/**
 * Mrkdwn written in the bot's own source: the literal parts are trusted as written, and only
 * {@link Mrkdwn} (or numbers) may be interpolated, so a raw string has to pass through an
 * escaping builder first.
 */
export function md(strings: TemplateStringsArray, ...values: readonly (Mrkdwn | number)[]): Mrkdwn {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += String(value) + (strings[i + 1] ?? '');
  });
  return built(out);
}

/** Text shown exactly as written: `&`, `<` and `>` escaped, so it forms no link or mention. */
export function escapeMrkdwn(text: string): Mrkdwn {
  return built(text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'));
}

const decodeEntities = (text: string) =>
  text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

function readableToken(inner: string): string {
  const bar = inner.indexOf('|');
  const target = bar === -1 ? inner : inner.slice(0, bar);
  // Current clients send `<#C123|>`: an empty label means "no label".
  const label = bar === -1 || bar === inner.length - 1 ? undefined : inner.slice(bar + 1);
  if (target.startsWith('@')) return `@${label ?? target.slice(1)}`;
  if (target.startsWith('#')) return `#${label ?? target.slice(1)}`;
  if (target.startsWith('!subteam^')) return label ?? '@group';
  if (target.startsWith('!date^')) return label ?? '';
  if (target.startsWith('!')) return `@${label ?? target.slice(1)}`;
  if (target.startsWith('mailto:')) return label ?? target.slice('mailto:'.length);
  if (label === undefined || label === target) return target;
  return `${label} (${target})`;
}

/** Turns Slack mrkdwn into readable plain text: `<https://x|docs>` → `docs (https://x)`. */
export function mrkdwnToPlain(text: string): string {
  return decodeEntities(text.replace(/<([^<>\n]+)>/g, (_m, inner: string) => readableToken(inner)));
}

/**
 * Text a person wrote, as Slack encoded it (events and commands), quoted back readable and
 * inert: `<!here>` shows as `@here`, a user group as its name, a link as its label and its real
 * address, and none of them notifies anyone or hides where it leads.
 */
export function inertSlackText(encoded: string): Mrkdwn {
  return escapeMrkdwn(mrkdwnToPlain(encoded));
}

/** A mention of one person: the bot mentions only the people it means to notify. */
export function userMention(userId: string): Mrkdwn {
  return isUserId(userId) ? built(`<@${userId}>`) : escapeMrkdwn(userId);
}

/** A link to a conversation (Slack shows its name; nobody is notified). */
export function channelMention(channelId: string): Mrkdwn {
  return SLACK_ID.test(channelId) && /^[CGD]/.test(channelId)
    ? built(`<#${channelId}>`)
    : escapeMrkdwn(channelId);
}

/** The largest time a JavaScript Date can hold, in epoch milliseconds. */
const MAX_DATE_MS = 8.64e15;

/** A time Slack shows in the reader's time zone; `format` is Slack's, e.g. `{time}`. */
export function slackDate(at: Date | number, format: '{time}' | '{date_short_pretty} at {time}'): Mrkdwn {
  const ms = typeof at === 'number' ? at : at.getTime();
  // A time from outside (an agent API's Retry-After) may be no time at all: never throw while
  // telling someone what happened.
  if (!Number.isFinite(ms) || Math.abs(ms) > MAX_DATE_MS) return md`later`;
  const fallback = `${new Date(ms).toISOString().slice(11, 16)} UTC`;
  return built(`<!date^${Math.floor(ms / 1000)}^${format}|${fallback}>`);
}

/** Text in a code span: escaped, and a backtick cannot close the span early. */
export function codeSpan(text: string): Mrkdwn {
  return md`\`${escapeMrkdwn(text.replace(/[`\n\r]/g, (c) => (c === '`' ? "'" : ' ')))}\``;
}

/** A link the bot built, to an address checked by `checkUrl`; the label is escaped. */
export function link(url: SafeUrl, label: string): Mrkdwn {
  return built(`<${url.replace(/&/g, '&amp;')}|${escapeMrkdwn(label).replace(/\|/g, '/')}>`);
}

/** Joins mrkdwn with a separator the bot chose. */
export function joinMrkdwn(parts: readonly Mrkdwn[], separator: Mrkdwn = md`\n`): Mrkdwn {
  return built(parts.join(separator));
}

/** Shortens mrkdwn without breaking an entity, an escape or an emoji code. */
export function truncateMrkdwn(text: Mrkdwn, max: number): Mrkdwn {
  return built(truncateText(text, max));
}

/** Quotes mrkdwn as a block quote, line by line. */
export function blockQuote(text: Mrkdwn): Mrkdwn {
  return built(
    text
      .split('\n')
      .map((line) => `>${line}`)
      .join('\n'),
  );
}

/**
 * Mrkdwn this bot rendered earlier and recorded in its own store (the outbox keeps the finished
 * text of each post, so a restart sends exactly what was decided). Nothing else may use this.
 */
export function recordedMrkdwn(text: string): Mrkdwn {
  return built(text);
}

/**
 * Shortens Slack text to at most `max` characters (ellipsis included) without breaking what
 * Slack renders as one unit: a `<…>` entity (link, mention, channel, date), an `&amp;`-style
 * escape, an `:emoji:` code, or a surrogate pair.
 */
export function truncateText(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = Math.max(0, max - 1);
  // Inside a <…> entity: cut before it.
  const open = text.lastIndexOf('<', cut - 1);
  if (open !== -1 && text.indexOf('>', open) >= cut) cut = open;
  // Inside an &…; escape.
  const amp = text.lastIndexOf('&', cut - 1);
  if (amp !== -1 && cut - amp < 6) {
    const semi = text.indexOf(';', amp);
    if (semi >= cut && semi - amp <= 5) cut = amp;
  }
  // Inside an :emoji: code (a colon run without spaces that closes after the cut).
  const emoji = /:[a-z0-9_+-]*$/i.exec(text.slice(Math.max(0, cut - 40), cut));
  if (emoji && /^[a-z0-9_+-]*:/i.test(text.slice(cut))) cut -= emoji[0].length;
  // Between the two halves of a surrogate pair.
  const code = text.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
  return `${text.slice(0, cut).trimEnd()}…`;
}
