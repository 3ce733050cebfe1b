/**
 * Where secret values hide in the environment, for redaction. Kept apart from configuration
 * parsing so the start-up failure path can mask secrets of an environment that does not parse.
 */

/** Decodes the valid %XX sequences of a URL part; a stray `%` stays as written. */
function decodeLoosely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text.replace(/(%[0-9A-Fa-f]{2})+/g, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run;
      }
    });
  }
}

/**
 * The password inside a database URL, if it has one (in its userinfo or as a `password` query
 * parameter): as written, as a URL parser normalises it, and decoded (the value the server sees).
 * Read even from a URL too malformed to parse.
 */
export function databasePassword(url: string | undefined): string[] {
  if (!url) return [];
  const found: string[] = [];
  // Up to the last "@": a password may hold an unencoded "@", "/" or "#".
  const written = /^[a-z][a-z0-9+.-]*:\/\/[^:@/?#]*:(.*)@/i.exec(url)?.[1];
  if (written) found.push(written);
  // libpq and pg also take the password as a query parameter (`?password=…`).
  const parameter = /[?&]password=([^&#]*)/i.exec(url)?.[1];
  if (parameter) found.push(parameter);
  try {
    const parsed = new URL(url);
    if (parsed.password) found.push(parsed.password);
    const query = parsed.searchParams.get('password');
    if (query) found.push(query);
  } catch {
    // Not parseable: the written form is all there is.
  }
  return [...new Set(found.flatMap((p) => [p, decodeLoosely(p)]))].filter((p) => p.length > 0);
}

/** The secret values an environment holds, for redaction when it is not a valid configuration. */
export function secretsOfEnv(env: Record<string, string | undefined> = process.env): string[] {
  return [
    ...[
      'SLACK_BOT_TOKEN',
      'SLACK_SIGNING_SECRET',
      'SLACK_APP_TOKEN',
      'DOCS_AGENT_API_KEY',
      'METRICS_TOKEN',
    ].flatMap((name) => {
      const value = env[name];
      return value ? [value, value.trim()] : [];
    }),
    ...databasePassword(env.DATABASE_URL?.trim()),
  ].filter((s) => s.length > 0);
}
