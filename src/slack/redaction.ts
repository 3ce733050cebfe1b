/** The logger's redaction (`createRedactor` of every configured secret), for one string. */
export type Redact = (text: string) => string;

/**
 * `value` with every string in it, however deep (a message's blocks, a view), passed through
 * `redact`. Keys are kept: the bot writes them itself.
 */
export function redactDeep<T>(value: T, redact: Redact): T {
  const walk = (item: unknown): unknown => {
    if (typeof item === 'string') return redact(item);
    if (Array.isArray(item)) return item.map(walk);
    if (item !== null && typeof item === 'object') {
      return Object.fromEntries(Object.entries(item).map(([key, inner]) => [key, walk(inner)]));
    }
    return item;
  };
  return walk(value) as T;
}
