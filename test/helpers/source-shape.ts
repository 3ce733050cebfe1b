import ts from 'typescript';

/*
 * What the architecture test reads in a source file, with the TypeScript parser.
 */

/** A factory's name: its body is a list of named parts. */
const FACTORY = /^(create|open|register|build)[A-Z]/;

/**
 * Functions in `source` over `maxLines` lines, as `name (lines)`. A factory is measured by its own
 * statements (the functions it declares are measured on their own), so its body stays a list of
 * named parts.
 */
export function longFunctions(fileName: string, source: string, maxLines: number): string[] {
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
      if (lines > maxLines) long.push(`${name} (${lines})`);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return long;
}

/** A type that gathers many dependencies, which modules should ask for a few members of. */
export interface WholeType {
  /** Its exported name. */
  name: string;
  /** Whether an import's module specifier, written in `file`, names a module that declares it. */
  declaredIn: (specifier: string, file: string) => boolean;
}

/**
 * Whether a module uses the whole of `type` rather than a few of its members: a reference to it
 * (imported by name, renamed, or through a namespace), a class implementing it or an interface
 * extending it, or a re-export, except as `Pick<Type, …>` or `Type['member']`, which ask for a
 * few members.
 */
export function takesWhole(fileName: string, source: string, type: WholeType): boolean {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true);
  const names = new Set<string>();
  const namespaces = new Set<string>();
  let whole = false;
  for (const statement of file.statements) {
    if (!ts.isImportDeclaration(statement) && !ts.isExportDeclaration(statement)) continue;
    const from = statement.moduleSpecifier;
    if (!from || !ts.isStringLiteral(from) || !type.declaredIn(from.text, fileName)) continue;
    const named = ts.isImportDeclaration(statement)
      ? statement.importClause?.namedBindings
      : statement.exportClause;
    if (named && (ts.isNamespaceImport(named) || ts.isNamespaceExport(named)))
      namespaces.add(named.name.text);
    else if (named) {
      const taken = named.elements.filter(
        (element) => (element.propertyName ?? element.name).text === type.name,
      );
      if (ts.isExportDeclaration(statement)) whole ||= taken.length > 0;
      for (const element of taken) names.add(element.name.text);
    } else if (ts.isExportDeclaration(statement)) whole = true;
  }
  const isType = (name: ts.Node) =>
    (ts.isIdentifier(name) && names.has(name.text)) ||
    (ts.isQualifiedName(name) && name.right.text === type.name && namespaces.has(name.left.getText())) ||
    (ts.isPropertyAccessExpression(name) &&
      name.name.text === type.name &&
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
    if (ts.isTypeReferenceNode(node) && isType(node.typeName) && !narrowed(node)) whole = true;
    if (ts.isExpressionWithTypeArguments(node) && isType(node.expression)) whole = true;
    ts.forEachChild(node, visit);
  };
  visit(file);
  return whole;
}
