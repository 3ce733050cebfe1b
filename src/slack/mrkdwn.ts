/**
 * Slack message text is mrkdwn: `&`, `<` and `>` are escaped and links, mentions and channels
 * are wrapped in angle brackets. The agent should read what the person saw, not the markup.
 */

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

/** Escapes text for inclusion in a mrkdwn message, so it cannot form links or mentions. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
