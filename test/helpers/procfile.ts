import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * The arguments after `node` of a Procfile process (`web`, `release`), with paths made absolute,
 * so tests and the benchmark start the app exactly as the platform does.
 */
export function procfileArgs(process: 'web' | 'release'): string[] {
  const line = readFileSync(resolve('Procfile'), 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${process}:`));
  if (!line) throw new Error(`the Procfile has no ${process}: line`);
  const [node, ...args] = line
    .slice(process.length + 1)
    .trim()
    .split(/\s+/);
  if (node !== 'node') throw new Error(`the Procfile's ${process}: line does not start with node`);
  return args.map((a) => (a.startsWith('-') ? a : resolve(a)));
}
