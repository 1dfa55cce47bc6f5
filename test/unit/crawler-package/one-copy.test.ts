/**
 * One source of truth: the event schema and the classifier live in the crawler package
 * (packages/crawler, `@target-health/crawler`) and nowhere else. The server imports them by the
 * package's name (never by a relative path into packages/), declares none of their names again, and the
 * package itself reaches nothing of the server. A second step moved the recorder, the controls client
 * and the Crawlee adapter in as well; the server keeps thin re-exports (`target-health/recorder`, …) and
 * the two PostgreSQL parts, which need its store code.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, resolve } from 'node:path';
import ts from 'typescript';
import * as crawlerEvents from '@target-health/crawler/events';
import * as signals from '../../../core/signals';

const ROOT = resolve(__dirname, '..', '..', '..');
const PACKAGE = join(ROOT, 'packages', 'crawler');

const tracked = (pattern: string): string[] =>
  execFileSync('git', ['ls-files', pattern], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);

/** Every module specifier a file names: imports, exports, require, import(), jest.mock and the like. */
function specifiersOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    )
      found.push(node.moduleSpecifier.text);
    if (ts.isCallExpression(node) && node.arguments.length > 0 && ts.isStringLiteral(node.arguments[0]!)) {
      const callee = node.expression.getText(source);
      if (
        /^(require|require\.resolve|import|jest\.(mock|requireActual|doMock|unmock))$/.test(callee) ||
        node.expression.kind === ts.SyntaxKind.ImportKeyword
      )
        found.push(node.arguments[0].text);
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
    const exported =
      ts.canHaveModifiers(statement) && ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
    if (!exported) continue;
    if (ts.isVariableStatement(statement)) {
      for (const d of statement.declarationList.declarations) if (ts.isIdentifier(d.name)) names.push(d.name.text);
    } else if (ts.isTypeAliasDeclaration(statement)) {
      if (ts.isTypeLiteralNode(statement.type)) names.push(statement.name.text);
    } else if (
      (ts.isFunctionDeclaration(statement) ||
        ts.isClassDeclaration(statement) ||
        ts.isInterfaceDeclaration(statement)) &&
      statement.name
    ) {
      names.push(statement.name.text);
    }
  }
  return names;
}

const packageSources = (): string[] =>
  tracked('packages/crawler/src/*.ts')
    .concat(tracked('packages/crawler/src/**/*.ts'))
    .filter((f, i, all) => all.indexOf(f) === i);
const serverSources = (): string[] => tracked('*.ts').filter((f) => !f.startsWith('packages/'));

test('the server reaches the package by its name only, never by a path into packages/', () => {
  const offending = serverSources().flatMap((file) =>
    specifiersOf(file)
      .filter(
        (s) => s.startsWith('.') && relative(ROOT, normalize(join(ROOT, dirname(file), s))).startsWith('packages'),
      )
      .map((s) => `${file}: ${s}`),
  );
  expect(offending).toEqual([]);
});

test('no server module declares a name of the package again (no second copy of the schema or classifier)', () => {
  const packageNames = new Map<string, string>();
  // The schema, the classifier and the ingest result types: what the server must not define twice. (The
  // crawler-side code has names of its own that the server may reuse for different things, e.g. the
  // canary runner's undici-specific `networkErrorOf`.)
  const shared = packageSources().filter(
    (f) => f.startsWith('packages/crawler/src/events/') || f === 'packages/crawler/src/recorder/types.ts',
  );
  for (const file of shared) for (const name of exportedNames(file)) packageNames.set(name, file);
  expect(packageNames.get('IngestResult')).toBe('packages/crawler/src/recorder/types.ts');
  expect(packageNames.get('parseEvent')).toBe('packages/crawler/src/events/event.ts');
  expect(packageNames.get('classifyOutcome')).toBe('packages/crawler/src/events/classify.ts');
  const again = serverSources()
    .filter((f) => !f.startsWith('test/'))
    .flatMap((file) =>
      exportedNames(file)
        .filter((name) => packageNames.has(name))
        .map((name) => `${file} declares ${name} (also ${packageNames.get(name)})`),
    );
  expect(again).toEqual([]);
});

/**
 * What the package's code may name besides its own files: Node builtins (not in `events`, which is pure),
 * its dependencies (none: zod is bundled into the build, and only src/zod.ts names it) and its optional
 * peers, each only in the subpath that loads it (Crawlee in `crawlee`, pg in `postgres`).
 */
const PACKAGE_DEPENDENCIES: string[] = [];
const ZOD_DOOR = 'packages/crawler/src/zod.ts';
const PEER_HOMES: Readonly<Record<string, string>> = {
  '@crawlee/core': 'packages/crawler/src/crawlee/',
  pg: 'packages/crawler/src/postgres/',
};
const PACKAGE_PEERS = Object.keys(PEER_HOMES).sort();

test('the package reaches nothing outside itself, only its declared dependencies', () => {
  const outside = packageSources().flatMap((file) =>
    specifiersOf(file)
      .filter((s) => {
        if (s.startsWith('.'))
          return relative(join(PACKAGE, 'src'), normalize(join(ROOT, dirname(file), s))).startsWith('..');
        if (s.startsWith('node:')) return file.startsWith('packages/crawler/src/events/');
        const home = PEER_HOMES[s];
        if (home !== undefined) return !file.startsWith(home);
        if (s === 'zod' || s.startsWith('zod/')) return file !== ZOD_DOOR;
        return !PACKAGE_DEPENDENCIES.includes(s);
      })
      .map((s) => `${file}: ${s}`),
  );
  expect(outside).toEqual([]);
  const manifest = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
    peerDependencies?: Record<string, string>;
    peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  };
  expect(Object.keys(manifest.dependencies ?? {}).sort()).toEqual(PACKAGE_DEPENDENCIES);
  // zod is bundled at build time (scripts/bundle-zod.mjs): a devDependency, never one of the user's.
  expect(Object.keys(manifest.devDependencies ?? {})).toContain('zod');
  expect(Object.keys(manifest.peerDependencies ?? {}).sort()).toEqual(PACKAGE_PEERS);
  for (const peer of PACKAGE_PEERS) expect(manifest.peerDependenciesMeta?.[peer]?.optional).toBe(true);
});

test('the server’s `target-health/{recorder,controls,crawlee}` hand out the package’s own code', () => {
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded side by side to compare identities */
  const pairs: Array<[Record<string, unknown>, Record<string, unknown>, string]> = [
    [
      require('../../../server/compat/recorder') as Record<string, unknown>,
      require('@target-health/crawler/recorder') as Record<string, unknown>,
      'createRecorder',
    ],
    [
      require('../../../server/compat/controls') as Record<string, unknown>,
      require('@target-health/crawler/controls') as Record<string, unknown>,
      'createControlsClient',
    ],
    [
      require('../../../server/compat/crawlee') as Record<string, unknown>,
      require('@target-health/crawler/crawlee') as Record<string, unknown>,
      'targetHealth',
    ],
  ];
  /* eslint-enable @typescript-eslint/no-require-imports */
  for (const [server, pkg, name] of pairs) {
    expect(typeof pkg[name]).toBe('function');
    expect(server[name]).toBe(pkg[name]);
  }
});

test('`target-health/signals` hands out the package’s own functions, not copies', () => {
  const server = signals as unknown as Record<string, unknown>;
  const events = crawlerEvents as unknown as Record<string, unknown>;
  expect(typeof events.parseEvent).toBe('function');
  for (const name of ['parseEvent', 'classifyOutcome', 'normaliseSite', 'RequestOutcomeEvent'])
    expect(server[name]).toBe(events[name]);
});
