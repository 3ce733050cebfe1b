/** `<@U123>` or `<@U123|name>` for the given user. */
const mentionOf = (userId: string) => new RegExp(`<@${userId}(\\|[^>]*)?>`, 'g');

/** Whether the text mentions the user. */
export const mentionsUser = (text: string, userId: string) => mentionOf(userId).test(text);

/** The text with every mention of the user taken out (the bot's own name is not an instruction). */
export const withoutMention = (text: string, userId: string) =>
  text
    .replace(mentionOf(userId), ' ')
    .replace(/[ \t]{2,}/g, ' ')
    .trim();

/** Whether a reply is an aside: it starts with the marker (empty: asides are off). */
export const isAside = (text: string, marker: string) =>
  marker.length > 0 && text.trimStart().startsWith(marker);
