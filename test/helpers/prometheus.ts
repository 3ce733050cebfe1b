/**
 * A small reader of the Prometheus text exposition format (0.0.4), strict enough that output
 * it cannot read fails the test: every line is a comment, blank, or `name{labels} value`.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  /** Family name to its `# TYPE` and `# HELP`. */
  families: Map<string, { type: string; help: string }>;
  samples: Sample[];
  /**
   * The sum of the samples named `name` whose labels include `labels` (0 when none does).
   * Undefined when no sample has that name.
   */
  value(name: string, labels?: Record<string, string>): number | undefined;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;

/** Reads `{a="x",b="y\"z"}` starting at `text[at]` (the `{`); returns the labels and where they end. */
function readLabels(text: string, at: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = at + 1;
  while (text[i] !== '}') {
    const name = NAME.exec(text.slice(i))?.[0];
    if (!name || text[i + name.length] !== '=' || text[i + name.length + 1] !== '"')
      throw new Error(`bad label at ${i}: ${text}`);
    i += name.length + 2;
    let value = '';
    while (text[i] !== '"') {
      if (i >= text.length) throw new Error(`unterminated label value: ${text}`);
      if (text[i] === '\\') {
        const next = text[i + 1];
        value += next === 'n' ? '\n' : next;
        i += 2;
      } else {
        value += text[i];
        i += 1;
      }
    }
    labels[name] = value;
    i += 1;
    if (text[i] === ',') i += 1;
  }
  return { labels, end: i + 1 };
}

function readValue(text: string): number {
  const lower = text.toLowerCase();
  if (lower === 'nan') return Number.NaN;
  if (lower === '+inf') return Number.POSITIVE_INFINITY;
  if (lower === '-inf') return Number.NEGATIVE_INFINITY;
  const value = Number(text);
  if (text === '' || Number.isNaN(value)) throw new Error(`bad sample value: ${text}`);
  return value;
}

export function parseExposition(text: string): Exposition {
  const families = new Map<string, { type: string; help: string }>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const comment = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (comment) {
      const [, kind, name = '', rest = ''] = comment;
      const family = families.get(name) ?? { type: 'untyped', help: '' };
      if (kind === 'TYPE') family.type = rest;
      else family.help = rest;
      families.set(name, family);
      continue;
    }
    if (line.startsWith('#')) continue;
    const name = NAME.exec(line)?.[0];
    if (!name) throw new Error(`bad sample line: ${line}`);
    let labels: Record<string, string> = {};
    let rest = line.slice(name.length);
    if (rest.startsWith('{')) {
      const read = readLabels(line, name.length);
      labels = read.labels;
      rest = line.slice(read.end);
    }
    // A timestamp may follow the value.
    const [value = ''] = rest.trim().split(/\s+/);
    samples.push({ name, labels, value: readValue(value) });
  }
  return {
    families,
    samples,
    value(name, wanted = {}) {
      const named = samples.filter((s) => s.name === name);
      if (named.length === 0) return undefined;
      return named
        .filter((s) => Object.entries(wanted).every(([k, v]) => s.labels[k] === v))
        .reduce((sum, s) => sum + s.value, 0);
    },
  };
}
