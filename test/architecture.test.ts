import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/*
 * The shape the code keeps: folders under src/ import each other in one direction only (a
 * lower layer never reaches up, so each can be read and changed from the bottom up), and no file
 * grows past what one can hold in mind.
 */

const SRC = resolve(import.meta.dirname, '../src');
const MAX_LINES = 300;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** The folder directly under src/ a file belongs to; files at the top are the composition root. */
const folderOf = (file: string) => {
  const parts = relative(SRC, file).split(sep);
  return parts.length > 1 ? parts[0] : '(root)';
};

/** Folder → folders it imports (type-only imports included: they tie the layers together too). */
function folderGraph(files: string[]): Map<string, Map<string, string[]>> {
  const graph = new Map<string, Map<string, string[]>>();
  for (const file of files) {
    const from = folderOf(file);
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, false);
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const to = folderOf(resolve(dirname(file), fileName));
      if (to === from) continue;
      const edges = graph.get(from) ?? new Map<string, string[]>();
      edges.set(to, [...(edges.get(to) ?? []), `${relative(SRC, file)} imports ${fileName}`]);
      graph.set(from, edges);
    }
  }
  return graph;
}

/** A cycle of folders, with the imports that make it, or undefined. */
function findCycle(graph: Map<string, Map<string, string[]>>): string[] | undefined {
  const state = new Map<string, 'visiting' | 'done'>();
  const path: string[] = [];
  const visit = (folder: string): string[] | undefined => {
    if (state.get(folder) === 'done') return undefined;
    if (state.get(folder) === 'visiting') {
      const loop = [...path.slice(path.indexOf(folder)), folder];
      return loop.slice(1).map((to, i) => `${loop[i]} → ${to} (${graph.get(loop[i])?.get(to)?.[0]})`);
    }
    state.set(folder, 'visiting');
    path.push(folder);
    for (const next of graph.get(folder)?.keys() ?? []) {
      const found = visit(next);
      if (found) return found;
    }
    path.pop();
    state.set(folder, 'done');
    return undefined;
  };
  for (const folder of graph.keys()) {
    const found = visit(folder);
    if (found) return found;
  }
  return undefined;
}

describe('the shape of src/', () => {
  const files = sourceFiles(SRC);

  it('has no import cycle between folders', () => {
    expect(files.length).toBeGreaterThan(50);
    expect(findCycle(folderGraph(files))).toBeUndefined();
  });

  it('finds a cycle when there is one', () => {
    const graph = new Map([
      ['jobs', new Map([['blocks', ['jobs/a.ts imports ../blocks/b.js']]])],
      ['blocks', new Map([['jobs', ['blocks/b.ts imports ../jobs/a.js']]])],
    ]);
    expect(findCycle(graph)).toEqual([
      'jobs → blocks (jobs/a.ts imports ../blocks/b.js)',
      'blocks → jobs (blocks/b.ts imports ../jobs/a.js)',
    ]);
  });

  it(`keeps every file under ${MAX_LINES} lines`, () => {
    const long = files
      .map((file) => ({ file: relative(SRC, file), lines: readFileSync(file, 'utf8').split('\n').length }))
      .filter(({ lines }) => lines > MAX_LINES);
    expect(long).toEqual([]);
  });
});
