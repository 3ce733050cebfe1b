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
const ARCHITECTURE = resolve(import.meta.dirname, '../docs/architecture.md');
const MAX_LINES = 300;
/** Longest function body one reads at a glance; factories (a list of named parts) may be longer. */
const MAX_FUNCTION_LINES = 80;
const FACTORY = /^(create|open|register|build)[A-Z]/;

/**
 * Functions in `source` over {@link MAX_FUNCTION_LINES} lines, as `name (lines)`. A factory is
 * measured by its own statements (the functions it declares are measured on their own), so its
 * body stays a list of named parts.
 */
function longFunctions(fileName: string, source: string): string[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true);
  const long: string[] = [];
  const nameOf = (node: ts.Node): string => {
    if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) && node.name)
      return node.name.getText();
    const parent = node.parent;
    if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) return parent.name.getText();
    // A function returned by a factory (a listener's handler) is read as part of it.
    const outer = ts.findAncestor(parent, (n) => ts.isFunctionLike(n) && 'body' in n);
    return outer ? nameOf(outer) : '(anonymous)';
  };
  const span = (node: ts.Node) =>
    file.getLineAndCharacterOfPosition(node.end).line -
    file.getLineAndCharacterOfPosition(node.getStart()).line +
    1;
  // Lines of the functions declared inside `node`, each but its first line (which stays in the list).
  const nested = (node: ts.Node): number =>
    ts.isFunctionLike(node) && 'body' in node && node.body
      ? span(node) - 1
      : node.getChildren(file).reduce((sum, child) => sum + nested(child), 0);
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const name = nameOf(node);
      const lines = FACTORY.test(name) ? span(node) - nested(node.body) : span(node);
      if (lines > MAX_FUNCTION_LINES) long.push(`${name} (${lines})`);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return long;
}

/**
 * The layers, top first, as docs/architecture.md draws them: the first fenced block after
 * "Folders import each other", `→` between layers and `,` between the parts of one. The drawing
 * is the one source of the order, so the page and this test cannot disagree.
 */
function layersFrom(markdown: string): string[][] {
  const after = markdown.slice(markdown.indexOf('Folders import each other'));
  const block = /```\n([\s\S]*?)```/.exec(after)?.[1] ?? '';
  return block
    .split('→')
    .map((layer) => layer.split(',').map((part) => part.trim()))
    .filter((layer) => layer.some((part) => part !== ''));
}

/** Imports that go up the order: from a folder to one in a layer above it. */
function upwardImports(graph: Map<string, Map<string, string[]>>, layers: string[][]): string[] {
  const rank = (part: string) => layers.findIndex((layer) => layer.includes(part));
  return [...graph].flatMap(([from, edges]) =>
    [...edges].filter(([to]) => rank(to) < rank(from)).flatMap(([, imports]) => imports),
  );
}

/** Most modules outside src/store that may take the whole `Store`: the composition root's. */
const MAX_WHOLE_STORE = 3;

/**
 * Whether a module uses the whole `Store` of src/store rather than its roles: a reference to it
 * (imported by name, renamed, or through a namespace), a class implementing it, or a re-export,
 * except as `Pick<Store, …>` or `Store['member']`, which ask for a few members.
 */
function takesWholeStore(fileName: string, source: string): boolean {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true);
  const names = new Set<string>();
  const namespaces = new Set<string>();
  let whole = false;
  for (const statement of file.statements) {
    if (!ts.isImportDeclaration(statement) && !ts.isExportDeclaration(statement)) continue;
    const from = statement.moduleSpecifier;
    if (!from || !ts.isStringLiteral(from) || !/(^|\/)store\//.test(from.text)) continue;
    const named = ts.isImportDeclaration(statement)
      ? statement.importClause?.namedBindings
      : statement.exportClause;
    if (named && (ts.isNamespaceImport(named) || ts.isNamespaceExport(named)))
      namespaces.add(named.name.text);
    else if (named) {
      const store = named.elements.filter(
        (element) => (element.propertyName ?? element.name).text === 'Store',
      );
      if (ts.isExportDeclaration(statement)) whole ||= store.length > 0;
      for (const element of store) names.add(element.name.text);
    } else if (ts.isExportDeclaration(statement)) whole = true;
  }
  const isStore = (name: ts.Node) =>
    (ts.isIdentifier(name) && names.has(name.text)) ||
    (ts.isQualifiedName(name) && name.right.text === 'Store' && namespaces.has(name.left.getText())) ||
    (ts.isPropertyAccessExpression(name) &&
      name.name.text === 'Store' &&
      namespaces.has(name.expression.getText()));
  const narrowed = (ref: ts.TypeReferenceNode) => {
    const parent = ref.parent;
    if (ts.isIndexedAccessTypeNode(parent)) return parent.objectType === ref;
    return (
      ts.isTypeReferenceNode(parent) &&
      parent.typeName.getText() === 'Pick' &&
      parent.typeArguments?.[0] === ref
    );
  };
  const visit = (node: ts.Node) => {
    if (ts.isTypeReferenceNode(node) && isStore(node.typeName) && !narrowed(node)) whole = true;
    if (ts.isExpressionWithTypeArguments(node) && isStore(node.expression)) whole = true;
    ts.forEachChild(node, visit);
  };
  visit(file);
  return whole;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** The folder directly under src/ a file belongs to, or the file's own name at the top (the composition root). */
// An import names the compiled `.js`; the file at the top is its `.ts`.
const folderOf = (file: string) => relative(SRC, file).split(sep)[0].replace(/\.js$/, '.ts');

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

  const layers = layersFrom(readFileSync(ARCHITECTURE, 'utf8'));

  it('places every folder, and every file at the top, in the layer order docs/architecture.md draws', () => {
    expect(layers.length).toBeGreaterThan(5);
    const placed = new Set(layers.flat());
    const unplaced = [...new Set(files.map(folderOf))].filter((part) => !placed.has(part));
    expect(unplaced).toEqual([]);
  });

  it('has no import that goes up the layer order', () => {
    expect(upwardImports(folderGraph(files), layers)).toEqual([]);
  });

  it('finds an import that goes up, and lets one go down or across a layer', () => {
    const order = layersFrom(
      'Folders import each other:\n\n```\napp.ts → jobs, home → delivery\n  → util\n```\n',
    );
    expect(order).toEqual([['app.ts'], ['jobs', 'home'], ['delivery'], ['util']]);
    const graph = new Map([
      [
        'delivery',
        new Map([
          ['home', ['delivery/outbox.ts imports ../home/home-publisher.js']],
          ['util', ['x']],
        ]),
      ],
      [
        'jobs',
        new Map([
          ['home', ['jobs/a.ts imports ../home/b.js']],
          ['delivery', ['y']],
        ]),
      ],
    ]);
    expect(upwardImports(graph, order)).toEqual(['delivery/outbox.ts imports ../home/home-publisher.js']);
  });

  it(`keeps every function but factories within ${MAX_FUNCTION_LINES} lines`, () => {
    const long = files.flatMap((file) =>
      longFunctions(file, readFileSync(file, 'utf8')).map((fn) => `${relative(SRC, file)}: ${fn}`),
    );
    expect(long).toEqual([]);
  });

  it('finds a long function, and lets a factory be long only in the functions it names', () => {
    const body = Array.from({ length: MAX_FUNCTION_LINES }, (_, i) => `  const a${i} = ${i};`).join('\n');
    const parts = Array.from({ length: 2 }, (_, i) => `  const part${i} = () => {\n${body}\n  };`).join('\n');
    const source = [
      `function send() {\n${body}\n}`,
      `function createOutbox() {\n${parts}\n}`,
      `function createLoop() {\n${body}\n${body}\n}`,
    ].join('\n');
    expect(longFunctions('x.ts', source)).toEqual([
      `send (${MAX_FUNCTION_LINES + 2})`,
      `part0 (${MAX_FUNCTION_LINES + 2})`,
      `part1 (${MAX_FUNCTION_LINES + 2})`,
      `createLoop (${2 * MAX_FUNCTION_LINES + 2})`,
    ]);
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

  it(`lets at most ${MAX_WHOLE_STORE} modules outside src/store take the whole store`, () => {
    const whole = files
      .filter((file) => !relative(SRC, file).startsWith(`store${sep}`))
      .filter((file) => takesWholeStore(file, readFileSync(file, 'utf8')))
      .map((file) => relative(SRC, file));
    expect(whole.length, whole.join(', ')).toBeLessThanOrEqual(MAX_WHOLE_STORE);
  });

  it('finds a module that takes the whole store, and lets one ask for roles or a few members', () => {
    const from = "from '../store/types.js';";
    const whole = [
      `import type { Store } ${from}\nexport interface Deps { store: Store }`,
      `import type { Store as All } ${from}\nlet store: All | undefined;`,
      `import type * as stores ${from}\nlet store: stores.Store | undefined;`,
      `import type { Store } ${from}\nexport class Memory implements Store {}`,
      `export type { Store } ${from}`,
    ];
    const narrow = [
      `import type { Store } ${from}\ntype A = Pick<Store, 'getJob'>;\ntype B = Store['apply'];`,
      `import type { JobsStore, UsesStore } ${from}\nlet store: JobsStore & UsesStore;`,
      "import type { Store } from './redux.js';\nlet store: Store;",
    ];
    expect(whole.map((source) => takesWholeStore('x.ts', source))).toEqual(whole.map(() => true));
    expect(narrow.map((source) => takesWholeStore('x.ts', source))).toEqual(narrow.map(() => false));
  });

  it(`keeps every file under ${MAX_LINES} lines`, () => {
    const long = files
      .map((file) => ({ file: relative(SRC, file), lines: readFileSync(file, 'utf8').split('\n').length }))
      .filter(({ lines }) => lines > MAX_LINES);
    expect(long).toEqual([]);
  });
});
