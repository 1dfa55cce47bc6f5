/**
 * The modules preloaded into the worker's shared V8 context (worker/workflow-bundle.ts) serve every
 * workflow on the worker at once, and the SDK deep-freezes what they export. This checks what that asks
 * of them, on the bundles webpack really builds: the shared graph is exactly the workflows' pure
 * modules, holds no module-level mutable state, imports nothing from the SDK, and exports no zod schema.
 * That sharing works at all (replaying every released history on the shared bundle) is the replay test's.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import ts from 'typescript';
import { z } from 'zod';
import { PER_WORKFLOW_MODULES, bundlerOptions } from '../../worker/workflow-bundle';

const ROOT = resolve(__dirname, '..', '..');
const quiet = {
  log() {},
  trace() {},
  debug() {},
  info() {},
  warn() {},
  error: (message: string, meta?: unknown) => console.error(message, meta),
};

/**
 * Every module webpack put in a bundle, from its inline source map: project files relative to the root, packages by
 * name.
 */
async function bundledModules(workflowsPath: string, preload: boolean): Promise<Set<string>> {
  const bundle = await bundleWorkflowCode({ workflowsPath, ...(preload ? bundlerOptions() : {}), logger: quiet });
  const inline = /sourceMappingURL=data:application\/json;(?:charset=utf-8;)?base64,([A-Za-z0-9+/=]+)/.exec(
    bundle.code,
  );
  if (inline === null) throw new Error('the workflow bundle has no inline source map');
  const map = JSON.parse(Buffer.from(inline[1]!, 'base64').toString('utf8')) as { sources: string[] };
  const modules = new Set<string>();
  for (const source of map.sources) {
    const path = source.replace(/^webpack:\/\/[^/]*\//, '');
    if (path.startsWith('webpack/')) continue;
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
    modules.add(pkg ? pkg[1]! : relative(ROOT, resolve(ROOT, path)));
  }
  return modules;
}

let shared: string[];
let product: string[];

beforeAll(async () => {
  // An empty workflow file bundled with and without the preload: what the preload adds is the shared graph.
  // Inside the project, so that the preloaded `zod` resolves to the package the product's imports resolve to.
  mkdirSync(join(ROOT, 'node_modules', '.cache'), { recursive: true });
  const dir = mkdtempSync(join(ROOT, 'node_modules', '.cache', 'th-bundle-'));
  const empty = join(dir, 'workflows.js');
  writeFileSync(empty, 'exports.nothing = async function nothing() {};\n');
  // One after another: webpack's lazily loaded internals do not survive concurrent compilations under Jest.
  const withPreload = await bundledModules(empty, true);
  const without = await bundledModules(empty, false);
  const full = await bundledModules(require.resolve('../../workflows'), true);
  shared = [...withPreload].filter((m) => !without.has(m)).sort();
  product = [...full].filter((m) => m.endsWith('.ts') && !m.startsWith('..')).sort();
}, 120_000);

const projectFiles = (): string[] => shared.filter((m) => m.endsWith('.ts'));

test(
  'the shared graph is every pure module the workflows use; only workflows/ and the SDK-defined messages stay ' +
    'per workflow',
  () => {
    expect(shared).toContain('zod');
    expect(projectFiles()).toEqual(
      expect.arrayContaining(['core/control/plan/index.ts', 'core/scoring/site-state.ts', 'core/control/decide.ts']),
    );
    const perWorkflow = new Set(PER_WORKFLOW_MODULES.map((m) => `${m}.ts`));
    const notShared = product.filter((m) => !shared.includes(m) && !m.startsWith('workflows/') && !perWorkflow.has(m));
    // A new pure module the workflows import belongs in SHARED_ROOTS (or is reached from one).
    expect(notShared).toEqual([]);
    expect(projectFiles().filter((m) => m.startsWith('workflows/') || perWorkflow.has(m))).toEqual([]);
    expect(shared.filter((m) => m.startsWith('@temporalio/'))).toEqual([]);
  },
);

/** Top-level statements of a module that would hold state across workflows, or reach the SDK. */
function sharingViolations(file: string, root = ROOT): string[] {
  const source = ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const at = (node: ts.Node): string => `${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  for (const statement of source.statements) {
    if (
      (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) &&
      statement.moduleSpecifier &&
      ts.isStringLiteral(statement.moduleSpecifier)
    ) {
      if (statement.moduleSpecifier.text.startsWith('@temporalio/'))
        found.push(`${at(statement)} imports ${statement.moduleSpecifier.text}`);
    }
    if (!ts.isVariableStatement(statement)) continue;
    const flags = statement.declarationList.flags;
    if (!(flags & ts.NodeFlags.Const)) found.push(`${at(statement)} declares a module-level let/var`);
    for (const declaration of statement.declarationList.declarations) {
      const init = declaration.initializer;
      if (
        init &&
        ts.isNewExpression(init) &&
        ts.isIdentifier(init.expression) &&
        /^(Map|Set|WeakMap|WeakSet|Array)$/.test(init.expression.text)
      ) {
        found.push(`${at(declaration)} holds a module-level ${init.expression.text}`);
      }
    }
  }
  return found;
}

test('no shared module holds module-level mutable state or imports the SDK', () => {
  expect(projectFiles().flatMap((file) => sharingViolations(file))).toEqual([]);
});

test('the check sees a module-level let and an SDK import', () => {
  const dir = mkdtempSync(join(tmpdir(), 'th-stateful-'));
  writeFileSync(
    join(dir, 'stateful.ts'),
    "import { sleep } from '@temporalio/workflow';\nlet count = 0;\nconst seen = new Map<string, " +
      'number>();\nexport const bump = (): number => ++count + seen.size + (sleep ? 0 : 1);\n',
  );
  expect(sharingViolations('stateful.ts', dir)).toEqual([
    'stateful.ts:1 imports @temporalio/workflow',
    'stateful.ts:2 declares a module-level let/var',
    'stateful.ts:3 holds a module-level Map',
  ]);
});

/**
 * Paths to zod schemas among a value's exports, as far as the SDK's deep freeze reaches (own properties of objects).
 */
function exportedSchemas(value: unknown, path: string, seen = new Set<unknown>()): string[] {
  if (value === null || typeof value !== 'object' || seen.has(value)) return [];
  seen.add(value);
  if ('_zod' in value) return [path];
  return Object.getOwnPropertyNames(value).flatMap((key) =>
    exportedSchemas((value as Record<string, unknown>)[key], `${path}.${key}`, seen),
  );
}

test('no shared module exports a zod schema (frozen, zod could not memoise its parsers on it)', async () => {
  const modules = await Promise.all(
    projectFiles().map(async (file) => [file, (await import(join(ROOT, file))) as unknown] as const),
  );
  const found = modules.flatMap(([file, exports]) => exportedSchemas(exports, file));
  expect(modules.length).toBeGreaterThan(20);
  expect(found).toEqual([]);
});

test('the schema check finds a schema nested in an exported object', () => {
  expect(exportedSchemas({ limits: { count: z.number() }, parse: () => null }, 'm')).toEqual(['m.limits.count']);
});
