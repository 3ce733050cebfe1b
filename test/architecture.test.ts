import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { longFunctions, takesWhole, type WholeType } from './helpers/source-shape.js';

/*
 * The shape the code keeps: folders under src/ import each other in one direction only (a
 * lower layer never reaches up, so each can be read and changed from the bottom up), each feature
 * (a folder of src/features) stands alone on what is below it, and no file grows past what one
 * can hold in mind.
 */

const SRC = resolve(import.meta.dirname, '../src');
const ARCHITECTURE = resolve(import.meta.dirname, '../docs/architecture.md');
const MAX_LINES = 300;
/** Longest function body one reads at a glance; factories (a list of named parts) may be longer. */
const MAX_FUNCTION_LINES = 80;

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

/** The store's every role: what only the composition root takes whole. */
const STORE: WholeType = { name: 'Store', declaredIn: (specifier) => /(^|\/)store\//.test(specifier) };

const takesWholeStore = (fileName: string, source: string) => takesWhole(fileName, source, STORE);

/** A type declared in one module of src/, imported by a relative path. */
const declaredAt = (name: string, module: string): WholeType => ({
  name,
  declaredIn: (specifier, file) => resolve(dirname(file), specifier) === join(SRC, module),
});

/** The bags of dependencies the job flows and the listeners are built from. */
const BAGS = [
  declaredAt('JobContext', 'jobs/job-context.js'),
  declaredAt('ListenerDeps', 'listeners/types.js'),
];

/**
 * The modules that may take a bag whole, because they build or route all of it: the job service
 * builds the job context and hands each flow its slice; the composition root builds the listeners'
 * bag, and their registrations hand each listener its own.
 */
const ROUTES_WHOLE_BAG =
  /^(jobs\/job-service\.ts|app-receiver\.ts|listeners\/index\.ts|listeners\/[^/]+\/index\.ts)$/;

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

/** An import between two modules of src/, both as paths from src/ with `/` between folders. */
interface ModuleImport {
  from: string;
  to: string;
}

const fromSrc = (file: string) => relative(SRC, file).split(sep).join('/');

/** Every relative import of `files` (type-only imports included), to the module's `.ts`. */
function moduleImports(files: string[]): ModuleImport[] {
  return files.flatMap((file) =>
    ts
      .preProcessFile(readFileSync(file, 'utf8'), true, false)
      .importedFiles.filter(({ fileName }) => fileName.startsWith('.'))
      .map(({ fileName }) => ({
        from: fromSrc(file),
        to: fromSrc(resolve(dirname(file), fileName)).replace(/\.js$/, '.ts'),
      })),
  );
}

/** The table that registers every listener, each feature's among them. */
const REGISTERS_LISTENERS = 'listeners/index.ts';

/**
 * The modules outside src/features that import features: the table of listeners, and the
 * composition root, which hands the kernel what features contribute to it (the feedback
 * buttons every outcome post carries, the command's help the App Home shows).
 */
const IMPORT_FEATURES = new Set([
  REGISTERS_LISTENERS,
  'app.ts',
  'app-build.ts',
  'app-receiver.ts',
  'app-parts.ts',
]);

/**
 * The feature a module belongs to: the folder under src/features it is in (`features/<name>`),
 * which is the unit the features' rules are about; undefined outside src/features.
 */
const featureOf = (path: string) => /^features\/[^/]+/.exec(path)?.[0];

const described = ({ from, to }: ModuleImport) => `${from} imports ${to}`;

/** Imports from one feature into another: features never import each other. */
function crossFeatureImports(imports: ModuleImport[]): string[] {
  return imports
    .filter(({ from, to }) => featureOf(from) && featureOf(to) && featureOf(from) !== featureOf(to))
    .map(described);
}

/** Imports of a feature from outside src/features, but by the table of listeners and the composition root. */
function importsOfFeatures(imports: ModuleImport[]): string[] {
  return imports
    .filter(({ from, to }) => !featureOf(from) && featureOf(to) && !IMPORT_FEATURES.has(from))
    .map(described);
}

/**
 * The store's files behind its one door, `store/types.ts`: outside src/store, their records and
 * roles are imported from the door, so each has one import path.
 */
const BEHIND_STORE_DOOR = new Set([
  'store/records.ts',
  'store/pull-request-records.ts',
  'store/cluster-store.ts',
]);

/** Imports from outside src/store of a file behind the store's door. */
function pastStoreDoor(imports: ModuleImport[]): string[] {
  return imports
    .filter(({ from, to }) => !from.startsWith('store/') && BEHIND_STORE_DOOR.has(to))
    .map(described);
}

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

  const imports = moduleImports(files);

  it('keeps each feature to its own folder: no feature imports another', () => {
    expect(
      imports.some(({ from }) => featureOf(from)),
      'no module under src/features',
    ).toBe(true);
    expect(crossFeatureImports(imports)).toEqual([]);
  });

  it('finds a feature that imports another, and lets one import within itself or below', () => {
    const found = crossFeatureImports([
      { from: 'features/feedback/listener.ts', to: 'features/feedback/record.ts' },
      { from: 'features/feedback/listener.ts', to: 'jobs/access-where-asked.ts' },
      { from: 'features/stop/listener.ts', to: 'features/feedback/wording.ts' },
      { from: 'features/stop/deep/part.ts', to: 'features/stop/listener.ts' },
      { from: 'features/feedback-admin/x.ts', to: 'features/feedback/record.ts' },
    ]);
    expect(found).toEqual([
      'features/stop/listener.ts imports features/feedback/wording.ts',
      'features/feedback-admin/x.ts imports features/feedback/record.ts',
    ]);
  });

  it('imports the store records and roles from its one door, store/types.ts, outside src/store', () => {
    expect(imports.some(({ to }) => to === 'store/types.ts')).toBe(true);
    expect(pastStoreDoor(imports)).toEqual([]);
    expect(
      pastStoreDoor([
        { from: 'jobs/outcomes.ts', to: 'store/records.ts' },
        { from: 'store/jobs.ts', to: 'store/records.ts' },
        { from: 'jobs/outcomes.ts', to: 'store/types.ts' },
        { from: 'features/feedback/record.ts', to: 'store/feedback.ts' },
      ]),
    ).toEqual(['jobs/outcomes.ts imports store/records.ts']);
  });

  it(`lets nothing outside src/features import a feature but ${REGISTERS_LISTENERS} and the composition root`, () => {
    // The exception is where the features really are registered: a table moved elsewhere fails here.
    const registered = imports.filter(({ from, to }) => from === REGISTERS_LISTENERS && featureOf(to));
    expect(registered).not.toEqual([]);
    expect(importsOfFeatures(imports)).toEqual([]);
  });

  it('finds a module outside the features that imports one, and lets the registration table and the composition root do so', () => {
    const found = importsOfFeatures([
      { from: REGISTERS_LISTENERS, to: 'features/feedback/listener.ts' },
      { from: 'app-build.ts', to: 'features/feedback/buttons.ts' },
      { from: 'jobs/outcomes.ts', to: 'features/feedback/buttons.ts' },
      { from: 'listeners/actions/index.ts', to: 'features/feedback/listener.ts' },
      { from: 'workflow-builder.ts', to: 'features/workflow-steps/wording.ts' },
      { from: 'metrics/metrics.ts', to: 'features/feedback/record.ts' },
      { from: 'jobs/outcomes.ts', to: 'store/feedback.ts' },
    ]);
    expect(found).toEqual([
      'jobs/outcomes.ts imports features/feedback/buttons.ts',
      'listeners/actions/index.ts imports features/feedback/listener.ts',
      'workflow-builder.ts imports features/workflow-steps/wording.ts',
      'metrics/metrics.ts imports features/feedback/record.ts',
    ]);
  });

  it(`keeps every function but factories within ${MAX_FUNCTION_LINES} lines`, () => {
    const long = files.flatMap((file) =>
      longFunctions(file, readFileSync(file, 'utf8'), MAX_FUNCTION_LINES).map(
        (fn) => `${relative(SRC, file)}: ${fn}`,
      ),
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
    expect(longFunctions('x.ts', source, MAX_FUNCTION_LINES)).toEqual([
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

  it('hands each job flow and each listener only the dependencies it uses', () => {
    const whole = files.flatMap((file) => {
      const source = readFileSync(file, 'utf8');
      const path = relative(SRC, file).split(sep).join('/');
      return BAGS.filter((bag) => takesWhole(file, source, bag)).map((bag) => ({ path, bag: bag.name }));
    });
    expect(whole.filter(({ path }) => !ROUTES_WHOLE_BAG.test(path))).toEqual([]);
    // The registrations do route the listeners' bag whole: the search finds it where it is.
    expect(whole).toContainEqual({ path: 'listeners/index.ts', bag: 'ListenerDeps' });
  });

  it('finds a module that takes a bag whole, and lets one pick fields of it', () => {
    const [jobContext, listenerDeps] = BAGS;
    const flow = join(SRC, 'jobs', 'start', 'x.ts');
    const listener = join(SRC, 'listeners', 'events', 'x.ts');
    const from = (module: string) => `from '${module}';\n`;
    const whole: [string, string, WholeType][] = [
      [
        flow,
        `import type { JobContext } ${from('../job-context.js')}function f(ctx: JobContext) {}`,
        jobContext,
      ],
      [
        flow,
        `import { type JobContext as C } ${from('../job-context.js')}type D = C & { x: 1 };`,
        jobContext,
      ],
      [
        listener,
        `import type * as l ${from('../types.js')}function f(deps: l.ListenerDeps) {}`,
        listenerDeps,
      ],
      [
        listener,
        `import type { ListenerDeps } ${from('../types.js')}interface D extends ListenerDeps {}`,
        listenerDeps,
      ],
    ];
    const narrow: [string, string, WholeType][] = [
      [
        flow,
        `import type { JobContext } ${from('../job-context.js')}let c: Pick<JobContext, 'store'>;`,
        jobContext,
      ],
      [
        listener,
        `import type { ListenerDeps } ${from('../types.js')}type J = ListenerDeps['jobs'];`,
        listenerDeps,
      ],
      [flow, `import type { ListenerDeps } ${from('./types.js')}let deps: ListenerDeps;`, listenerDeps],
    ];
    expect(whole.map((args) => takesWhole(...args))).toEqual(whole.map(() => true));
    expect(narrow.map((args) => takesWhole(...args))).toEqual(narrow.map(() => false));
  });

  it(`keeps every file under ${MAX_LINES} lines`, () => {
    const long = files
      .map((file) => ({ file: relative(SRC, file), lines: readFileSync(file, 'utf8').split('\n').length }))
      .filter(({ lines }) => lines > MAX_LINES);
    expect(long).toEqual([]);
  });
});
