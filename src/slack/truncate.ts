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
