/**
 * Issue 28, "one source of truth": the event schema and the classifier live in the crawler package
 * (packages/crawler, `@target-health/crawler`) and nowhere else. The server imports them by the
 * package's name (never by a relative path into packages/), declares none of their names again, and the
 * package itself reaches nothing of the server and depends on zod alone.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, resolve } from 'node:path';
import ts from 'typescript';
import * as crawlerEvents from '@target-health/crawler/events';
import * as signals from '../../../signals';

const ROOT = resolve(__dirname, '..', '..', '..');
const PACKAGE = join(ROOT, 'packages', 'crawler');

const tracked = (pattern: string): string[] => execFileSync('git', ['ls-files', pattern], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);

/** Every module specifier a file names: imports, exports, require, import(), jest.mock and the like. */
function specifiersOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) found.push(node.moduleSpecifier.text);
    if (ts.isCallExpression(node) && node.arguments.length > 0 && ts.isStringLiteral(node.arguments[0]!)) {
      const callee = node.expression.getText(source);
      if (/^(require|require\.resolve|import|jest\.(mock|requireActual|doMock|unmock))$/.test(callee) || node.expression.kind === ts.SyntaxKind.ImportKeyword) found.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * Names a module declares at its top level and exports: values, classes, interfaces and object-literal
 * types (a type alias derived from another type, `RequestOutcomeEventInput['route']`, copies nothing).
 */
function exportedNames(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const names: string[] = [];
  for (const statement of source.statements) {
    const exported = ts.canHaveModifiers(statement) && ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
    if (!exported) continue;
    if (ts.isVariableStatement(statement)) {
      for (const d of statement.declarationList.declarations) if (ts.isIdentifier(d.name)) names.push(d.name.text);
    } else if (ts.isTypeAliasDeclaration(statement)) {
      if (ts.isTypeLiteralNode(statement.type)) names.push(statement.name.text);
    } else if ((ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement) || ts.isInterfaceDeclaration(statement)) && statement.name) {
      names.push(statement.name.text);
    }
  }
  return names;
}

const packageSources = (): string[] => tracked('packages/crawler/src/*.ts').concat(tracked('packages/crawler/src/**/*.ts')).filter((f, i, all) => all.indexOf(f) === i);
const serverSources = (): string[] => tracked('*.ts').filter((f) => !f.startsWith('packages/'));

test('the server reaches the package by its name only, never by a path into packages/', () => {
  const offending = serverSources().flatMap((file) =>
    specifiersOf(file)
      .filter((s) => s.startsWith('.') && relative(ROOT, normalize(join(ROOT, dirname(file), s))).startsWith('packages'))
      .map((s) => `${file}: ${s}`),
  );
  expect(offending).toEqual([]);
});

test('no server module declares a name of the package again (no second copy of the schema or classifier)', () => {
  const packageNames = new Map<string, string>();
  for (const file of packageSources()) for (const name of exportedNames(file)) packageNames.set(name, file);
  expect(packageNames.get('parseEvent')).toBe('packages/crawler/src/events/event.ts');
  expect(packageNames.get('classifyOutcome')).toBe('packages/crawler/src/events/classify.ts');
  const again = serverSources()
    .filter((f) => !f.startsWith('test/'))
    .flatMap((file) => exportedNames(file).filter((name) => packageNames.has(name)).map((name) => `${file} declares ${name} (also ${packageNames.get(name)})`));
  expect(again).toEqual([]);
});

test('the package reaches nothing outside itself and depends on zod alone', () => {
  const outside = packageSources().flatMap((file) =>
    specifiersOf(file)
      .filter((s) => (s.startsWith('.') ? relative(join(PACKAGE, 'src'), normalize(join(ROOT, dirname(file), s))).startsWith('..') : s !== 'zod'))
      .map((s) => `${file}: ${s}`),
  );
  expect(outside).toEqual([]);
  const manifest = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')) as { dependencies?: Record<string, string>; peerDependencies?: Record<string, string> };
  expect(Object.keys(manifest.dependencies ?? {})).toEqual(['zod']);
  expect(manifest.peerDependencies).toBeUndefined();
});

test('`target-health/signals` hands out the package’s own functions, not copies', () => {
  const server = signals as unknown as Record<string, unknown>;
  const events = crawlerEvents as unknown as Record<string, unknown>;
  expect(typeof events.parseEvent).toBe('function');
  for (const name of ['parseEvent', 'classifyOutcome', 'normaliseSite', 'RequestOutcomeEvent']) expect(server[name]).toBe(events[name]);
});
