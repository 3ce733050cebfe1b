/** What the text after `/docs-agent` asks for. */
export type CommandText =
  | { kind: 'help' }
  | { kind: 'list'; scope: 'mine' | 'channel' }
  | { kind: 'status' }
  | { kind: 'unknown_subcommand'; word: string }
  | { kind: 'instruction'; text: string };

const HELP_WORDS = new Set(['', 'help', '-h', '--help', '?']);
/**
 * Words that read as a subcommand rather than an instruction when they stand alone. Kept
 * short: a one-word instruction such as "Proofread" must still start a job.
 */
const SUBCOMMAND_WORDS = new Set([
  'list',
  'cancel',
  'stop',
  'config',
  'settings',
  'version',
  'login',
  'logout',
]);

export function parseCommandText(raw: string): CommandText {
  const text = raw.trim();
  const lower = text.toLowerCase();
  if (HELP_WORDS.has(lower)) return { kind: 'help' };
  const words = lower.split(/\s+/);
  if (words[0] === 'list' && words.length <= 2) {
    if (words.length === 1 || words[1] === 'mine' || words[1] === 'me')
      return { kind: 'list', scope: 'mine' };
    if (words[1] === 'channel' || words[1] === 'here') return { kind: 'list', scope: 'channel' };
    return { kind: 'unknown_subcommand', word: text };
  }
  if (lower === 'status') return { kind: 'status' };
  if (/^--?[a-z][\w-]*$/i.test(text) || SUBCOMMAND_WORDS.has(lower))
    return { kind: 'unknown_subcommand', word: text };
  return { kind: 'instruction', text };
}
