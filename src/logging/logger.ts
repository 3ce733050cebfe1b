/** Log levels, most verbose first. */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type LogFields = Record<string, unknown>;

/** A structured logger: one JSON object per line. */
export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

// Shapes of Slack and agent API credentials, so a secret that is not in the configuration
// (an xapp token echoed by a library, a key in an upstream error body) is still masked. The same
// redaction runs over what people wrote and what the agent answered before Slack shows it, so a
// shape is a token's real syntax (a Slack token's numeric part; an admin key's long random tail,
// digits included), and never the tail of a lower-case word: "peppermint_tea", a repository named
// "mint_docs" or "xoxo-docs", and "the xoxb-style format" stay as they are.
const SECRET_PATTERNS = [
  /(?<![a-z_])xox[abposre]-[0-9]+-[A-Za-z0-9-]+/g,
  /(?<![a-z_])xapp-[0-9]+-[A-Za-z0-9-]+/g,
  // The token a Workflow Builder step execution carries (`bot_access_token`).
  /(?<![a-z_])xwfp-[0-9]+-[A-Za-z0-9-]+/g,
  /(?<![a-z_])mint_(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{16,}/g,
  // GitHub's tokens (`GITHUB_TOKEN`): classic and app ones (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`
  // and 36 more characters) and fine-grained ones (`github_pat_`).
  /(?<![a-z_])gh[pousr]_[A-Za-z0-9]{36,}/g,
  /(?<![a-z_])github_pat_[A-Za-z0-9_]{22,}/g,
];

/** Shorter values are not masked: they would mangle ordinary words. */
const MIN_SECRET_LENGTH = 4;
const MASK = '[redacted]';

const jsonEscaped = (text: string) => JSON.stringify(text).slice(1, -1);
/** As Slack's mrkdwn (and HTML) writes text shown as itself: `&`, `<`, `>` as entities. */
const entityEscaped = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const lowerHex = (text: string) => text.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());

/** How a URL's userinfo writes the value (WHATWG percent-encoding, as `new URL` normalises it). */
function userinfoEncoded(text: string): string {
  const url = new URL('http://host');
  url.password = text;
  return url.password;
}

/**
 * The ways a secret may be written where it leaks: as is, URL-encoded (a path or query, a
 * form body with `+` for spaces, a URL's userinfo), base64 (a Basic credential), with `&<>` as
 * entities (text in a Slack message), and each of those escaped once or twice as a JSON string
 * (a body or a line quoted inside a message).
 */
export function secretForms(secret: string): string[] {
  const encoded = [
    encodeURIComponent(secret),
    new URLSearchParams({ s: secret }).toString().slice(2),
    encodeURI(secret),
    userinfoEncoded(secret),
  ];
  const base = [
    secret,
    ...encoded,
    ...encoded.map(lowerHex),
    Buffer.from(secret).toString('base64'),
    entityEscaped(secret),
  ];
  const forms = base.flatMap((form) => [form, jsonEscaped(form), jsonEscaped(jsonEscaped(form))]);
  return [...new Set(forms)].filter((form) => form.length >= MIN_SECRET_LENGTH);
}

const regexpEscaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');

/** One alternation of every form, longest first so a longer form is never cut by a shorter one. */
function alternation(forms: Iterable<string>): RegExp | undefined {
  const sorted = [...new Set(forms)].sort((a, b) => b.length - a.length);
  return sorted.length ? new RegExp(sorted.map(regexpEscaped).join('|'), 'g') : undefined;
}

function maskWith(pattern: RegExp | undefined): Redact {
  const mask = (text: string) => {
    let out = pattern ? text.replace(pattern, MASK) : text;
    for (const shape of SECRET_PATTERNS) out = out.replace(shape, MASK);
    return out;
  };
  // `search` starts at 0 whatever a global pattern's `lastIndex`, and leaves it as it was.
  const finds = (text: string) =>
    (pattern !== undefined && text.search(pattern) !== -1) ||
    SECRET_PATTERNS.some((shape) => text.search(shape) !== -1);
  return Object.assign(mask, { finds });
}

const usable = (secrets: readonly string[]) =>
  [...new Set(secrets)].filter((s) => typeof s === 'string' && s.length >= MIN_SECRET_LENGTH);

/**
 * Returns a function that masks the given secret values, in every form of {@link secretForms},
 * and anything shaped like a Slack or agent API token. For plain text: error messages, a
 * string before it is serialised. The logger masks its lines with it, and the app masks with
 * the same one everything it shows in Slack (see `slack/caller.ts`).
 */
export function createRedactor(secrets: readonly string[]): Redact {
  return maskWith(alternation(usable(secrets).flatMap(secretForms)));
}

/**
 * The same, for text that is already a JSON document: it masks each form only as JSON writes
 * it, so a mask never lands inside an escape sequence.
 */
function createJsonRedactor(secrets: readonly string[]): (json: string) => string {
  return maskWith(alternation(usable(secrets).flatMap(secretForms).map(jsonEscaped)));
}

/**
 * The logger's redaction (`createRedactor` of every configured secret), for one string. `finds`,
 * where given, says whether it would change anything in `text`.
 */
export type Redact = ((text: string) => string) & { finds?: (text: string) => boolean };

/**
 * Every string in `value`, however deep, into `into`; false when it holds an object other than
 * a plain one or an array (which the walk below would turn into a plain object).
 */
function stringsOf(value: unknown, into: string[]): boolean {
  if (typeof value === 'string') into.push(value);
  else if (Array.isArray(value)) {
    for (const item of value) if (!stringsOf(item, into)) return false;
  } else if (value !== null && typeof value === 'object') {
    if (Object.getPrototypeOf(value) !== Object.prototype) return false;
    for (const inner of Object.values(value)) if (!stringsOf(inner, into)) return false;
  }
  return true;
}

/**
 * `value` with every string in it, however deep (a message's blocks, a view), passed through
 * `redact`; keys are kept (the bot writes them). When `redact` finds nothing in the strings,
 * asked as one text a line each (a line break, like a string's start, is no word character, so
 * what matches in a string matches there), `value` itself is returned: a copy would be the same.
 */
export function redactDeep<T>(value: T, redact: Redact): T {
  const strings: string[] = [];
  if (redact.finds && stringsOf(value, strings) && !redact.finds(strings.join('\n'))) return value;
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

function serializeError(error: Error): LogFields {
  const fields: LogFields = { name: error.name, message: error.message };
  const extra = error as Error & { code?: unknown; status?: unknown; cause?: unknown };
  if (extra.code !== undefined) fields.code = extra.code;
  if (extra.status !== undefined) fields.status = extra.status;
  if (extra.cause instanceof Error) fields.cause = serializeError(extra.cause);
  return fields;
}

export interface LoggerOptions {
  level: LogLevel;
  /** Values that must never be written, in any form of {@link secretForms}. */
  secrets: readonly string[];
  /** Where lines go; defaults to stdout (warn and error to stderr). */
  write?: (line: string, level: LogLevel) => void;
  now?: () => Date;
}

const defaultWrite = (line: string, level: LogLevel) => {
  (level === 'warn' || level === 'error' ? process.stderr : process.stdout).write(`${line}\n`);
};

/**
 * Creates a leveled JSON logger that redacts every secret from every line it writes. Every
 * string value (the message, fields, error messages, nested objects) is masked before it is
 * serialised, while it still reads as written; the finished line is checked again for the
 * forms JSON gives a secret, which also covers object keys.
 */
export function createLogger(options: LoggerOptions, bound: LogFields = {}): Logger {
  const threshold = LOG_LEVELS.indexOf(options.level);
  const redact = createRedactor(options.secrets);
  const redactJson = createJsonRedactor(options.secrets);
  const write = options.write ?? defaultWrite;
  const now = options.now ?? (() => new Date());
  const replacer = (_key: string, value: unknown): unknown => {
    if (typeof value === 'string') return redact(value);
    if (value instanceof Error) return serializeError(value);
    if (typeof value === 'bigint') return value.toString();
    return value;
  };

  const log = (level: LogLevel, msg: string, fields: LogFields | undefined, context: LogFields) => {
    if (LOG_LEVELS.indexOf(level) < threshold) return;
    const time = now().toISOString();
    let line: string;
    try {
      line = JSON.stringify({ time, level, msg, ...context, ...fields }, replacer);
    } catch {
      line = JSON.stringify({ time, level, msg, note: 'fields could not be serialized' }, replacer);
    }
    const checked = redactJson(line);
    // A mask that broke the line landed inside an escape sequence: withhold the line rather than
    // write part of a secret.
    write(
      checked === line || parses(checked)
        ? checked
        : JSON.stringify({ time, level, msg: MASK, note: 'line withheld: it held a secret' }),
      level,
    );
  };

  const build = (context: LogFields): Logger => ({
    debug: (msg, fields) => log('debug', msg, fields, context),
    info: (msg, fields) => log('info', msg, fields, context),
    warn: (msg, fields) => log('warn', msg, fields, context),
    error: (msg, fields) => log('error', msg, fields, context),
    child: (fields) => build({ ...context, ...fields }),
  });
  return build(bound);
}

function parses(json: string): boolean {
  try {
    JSON.parse(json);
    return true;
  } catch {
    return false;
  }
}

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
      'GITHUB_TOKEN',
    ].flatMap((name) => {
      const value = env[name];
      return value ? [value, value.trim()] : [];
    }),
    ...databasePassword(env.DATABASE_URL?.trim()),
  ].filter((s) => s.length > 0);
}
