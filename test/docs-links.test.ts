import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { END, FAULT_TABLES_PAGE, START } from './faults/report.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The README and every page under docs/: the documentation a reader follows links through. */
const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

const read = (page: string) => readFileSync(join(ROOT, page), 'utf8');

/** The text outside fenced code blocks and code spans, where a link is a link. */
function prose(text: string): string {
  return text.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchors for the headings of a page (a repeated heading gets -1, -2, …). */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of text.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '').matchAll(/^#{1,6} (.+)$/gm)) {
    const words = (heading ?? '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const base = words
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Every relative link of a page: where it points, from the repository's root, and its anchor. */
function relativeLinks(page: string): { link: string; file: string; anchor: string | undefined }[] {
  return [...prose(read(page)).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1] as string)
    .filter((link) => !/^[a-z][a-z0-9+.-]*:/i.test(link))
    .map((link) => {
      const [path = '', anchor] = link.split('#');
      const file = path === '' ? page : relative(ROOT, join(ROOT, dirname(page), path));
      return { link, file, anchor };
    });
}

describe('links in the README and docs/', () => {
  it('finds the pages and their links', () => {
    expect(PAGES).toContain('docs/configuration.md');
    expect(relativeLinks('README.md').length).toBeGreaterThan(10);
  });

  it('names GitHub anchors as GitHub does', () => {
    expect(anchorsOf('# TLS to PostgreSQL (`sslmode`)\n## Last run\n## Last run\n')).toEqual(
      new Set(['tls-to-postgresql-sslmode', 'last-run', 'last-run-1']),
    );
  });

  for (const page of PAGES)
    it(`every relative link of ${page} reaches a file, and a heading when it names one`, () => {
      const broken = relativeLinks(page).filter(({ file, anchor }) => {
        if (!existsSync(join(ROOT, file))) return true;
        if (anchor === undefined || !file.endsWith('.md')) return false;
        return !anchorsOf(read(file)).has(anchor);
      });
      expect(broken.map((b) => b.link)).toEqual([]);
    });
});

describe('generated blocks', () => {
  it(`the fault suite's tables have their markers in ${FAULT_TABLES_PAGE} only`, () => {
    const holders = PAGES.filter((p) => read(p).includes(START) || read(p).includes(END));
    expect(holders).toEqual([FAULT_TABLES_PAGE]);
    const text = read(FAULT_TABLES_PAGE);
    expect(text.indexOf(START)).toBeLessThan(text.indexOf(END));
  });
});
