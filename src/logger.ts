import { LOG_LEVELS, type LogLevel } from './config.js';

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
// (an xapp token echoed by a library, a key in an upstream error body) is still masked.
const SECRET_PATTERNS = [/xox[abposre]-[A-Za-z0-9-]+/g, /xapp-[A-Za-z0-9-]+/g, /mint_[A-Za-z0-9_-]+/g];

/** Returns a function that masks the given secret values and anything shaped like a token. */
export function createRedactor(secrets: readonly string[]): (text: string) => string {
  const values = [...new Set(secrets.filter((s) => s.length >= 4))].sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const value of values) out = out.split(value).join('[redacted]');
    for (const pattern of SECRET_PATTERNS) out = out.replace(pattern, '[redacted]');
    return out;
  };
}

function serializeError(error: Error): LogFields {
  const fields: LogFields = { name: error.name, message: error.message };
  const extra = error as Error & { code?: unknown; status?: unknown; cause?: unknown };
  if (extra.code !== undefined) fields.code = extra.code;
  if (extra.status !== undefined) fields.status = extra.status;
  if (extra.cause instanceof Error) fields.cause = serializeError(extra.cause);
  return fields;
}

function replacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return serializeError(value);
  if (typeof value === 'bigint') return value.toString();
  return value;
}

export interface LoggerOptions {
  level: LogLevel;
  /** Values that must never be written. */
  secrets: readonly string[];
  /** Where lines go; defaults to stdout (warn and error to stderr). */
  write?: (line: string, level: LogLevel) => void;
  now?: () => Date;
}

const defaultWrite = (line: string, level: LogLevel) => {
  (level === 'warn' || level === 'error' ? process.stderr : process.stdout).write(`${line}\n`);
};

/** Creates a leveled JSON logger that redacts every secret from every line it writes. */
export function createLogger(options: LoggerOptions, bound: LogFields = {}): Logger {
  const threshold = LOG_LEVELS.indexOf(options.level);
  const redact = createRedactor(options.secrets);
  const write = options.write ?? defaultWrite;
  const now = options.now ?? (() => new Date());

  const log = (level: LogLevel, msg: string, fields?: LogFields) => {
    if (LOG_LEVELS.indexOf(level) < threshold) return;
    let line: string;
    try {
      line = JSON.stringify({ time: now().toISOString(), level, msg, ...bound, ...fields }, replacer);
    } catch {
      line = JSON.stringify({
        time: now().toISOString(),
        level,
        msg,
        note: 'fields could not be serialized',
      });
    }
    write(redact(line), level);
  };

  return {
    debug: (msg, fields) => log('debug', msg, fields),
    info: (msg, fields) => log('info', msg, fields),
    warn: (msg, fields) => log('warn', msg, fields),
    error: (msg, fields) => log('error', msg, fields),
    child: (fields) => createLogger(options, { ...bound, ...fields }),
  };
}
