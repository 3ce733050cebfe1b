import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/*
 * `test/` mirrors `src/`: the test of `src/x/y.ts` is `test/x/y.test.ts` (or
 * `y.property.test.ts`), so a reader who changes a module knows where its test is, and a module
 * with logic and no test of its own cannot slip in unnoticed.
 */

const ROOT = resolve(import.meta.dirname, '..');
const SRC = join(ROOT, 'src');

/**
 * Modules with logic that are tested elsewhere on purpose, each with why. Kept short: an entry
 * here is a module a reader will not find a test of where they look first.
 */
const TESTED_ELSEWHERE: Record<string, string> = {
  'jobs/metrics-hooks.ts':
    'the hooks the app reports through, and hooks that do nothing when metrics are off; what each hook counts is tested with the metrics endpoint in test/metrics/',
};

function modules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return modules(path);
    return entry.name.endsWith('.ts') ? [relative(SRC, path)] : [];
  });
}

/**
 * Whether a module has logic a test can check: a function, a method or a class, or statements a
 * script runs. Declarations of types, constants and SQL text are read by the code that uses
 * them, and tested there.
 */
function hasLogic(path: string): boolean {
  const file = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const runs = (statement: ts.Statement) =>
    !ts.isImportDeclaration(statement) &&
    !ts.isExportDeclaration(statement) &&
    !ts.isTypeAliasDeclaration(statement) &&
    !ts.isInterfaceDeclaration(statement) &&
    !ts.isVariableStatement(statement) &&
    !ts.isEnumDeclaration(statement);
  // A signature without a body (an interface's method) is a type, not logic.
  const code = (node: ts.Node): boolean =>
    (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) ||
    ts.isClassLike(node) ||
    ts.forEachChild(node, code) === true;
  return file.statements.some((statement) => runs(statement) || code(statement));
}

const testsOf = (module: string): string[] => {
  const stem = module.replace(/\.ts$/, '');
  return [`${stem}.test.ts`, `${stem}.property.test.ts`].filter((test) =>
    existsSync(join(ROOT, 'test', test)),
  );
};

describe('test layout', () => {
  const all = modules(SRC);

  it('finds the modules it checks', () => {
    // A wrong root would find nothing and pass.
    expect(all).toContain('app.ts');
    expect(all).toContain('jobs/job-service.ts');
    expect(all.length).toBeGreaterThan(100);
  });

  it('tells a module with logic from one of declarations only', () => {
    expect(hasLogic(join(SRC, 'listeners/types.ts'))).toBe(false);
    expect(hasLogic(join(SRC, 'store/migrations.ts'))).toBe(false);
    expect(hasLogic(join(SRC, 'store/records.ts'))).toBe(false);
    expect(hasLogic(join(SRC, 'jobs/job-context.ts'))).toBe(true);
    expect(hasLogic(join(SRC, 'agent/errors.ts'))).toBe(true);
  });

  it('gives every module with logic a test at its matching path', () => {
    const missing = all.filter(
      (module) =>
        hasLogic(join(SRC, module)) && testsOf(module).length === 0 && !(module in TESTED_ELSEWHERE),
    );
    expect(missing, 'modules with logic and no test/<same path>.test.ts').toEqual([]);
  });

  it('keeps the list of modules tested elsewhere true', () => {
    const stale = Object.keys(TESTED_ELSEWHERE).filter(
      (module) => !all.includes(module) || testsOf(module).length > 0,
    );
    expect(stale, 'listed as tested elsewhere, but gone or now tested at the matching path').toEqual([]);
  });
});
