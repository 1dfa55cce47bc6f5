/**
 * The top-level folders are the architecture's layers (docs/architecture.md, "The map"): each may import
 * its own folder and the layers listed for it, nothing above. A relative import that reaches another
 * layer is checked here; package imports (`@target-health/crawler/…`, npm) are not layers. Test tiers
 * (test/unit, test/integration, …) share code only through the test kit (test/kit), which benchmarks and
 * scripts (dev/) import too.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { execFileSync } from 'node:child_process';

const ROOT = join(__dirname, '..', '..');

/** What each layer may import besides itself, lowest first (docs/architecture.md's table, "May import"). */
const EXPLICIT: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['core', []],
  ['loop', ['core']],
  ['workflows', ['core', 'loop', 'activities']],
  ['server', ['core', 'loop']],
  ['activities', ['core', 'loop', 'server']],
  ['worker', ['core', 'loop', 'server', 'activities', 'workflows']],
];
/** From the worker up, each layer may import what the one below it may, and that layer itself ("…"). */
const CUMULATIVE = ['stack', 'tools', 'client', 'dev'];
const MAY_IMPORT: Record<string, string[]> = Object.fromEntries(EXPLICIT.map(([l, m]) => [l, [...m]]));
CUMULATIVE.reduce((below, layer) => {
  MAY_IMPORT[layer] = [...MAY_IMPORT[below]!, below];
  return layer;
}, 'worker');
MAY_IMPORT.dev!.push('test/kit');
/** The kit serves tests and benchmarks: it may use the whole product and the harness. */
MAY_IMPORT['test/kit'] = [...MAY_IMPORT.dev!.filter((l) => l !== 'test/kit'), 'dev'];
const TEST_TIERS = ['unit', 'integration', 'faults', 'cluster', 'time-skipping', 'replay', 'setup'];
const PRODUCT = Object.keys(MAY_IMPORT).filter((l) => l !== 'test/kit');

/** The layer a repository path belongs to: a top folder, the test kit, or a test tier. */
function layerOf(path: string): string | undefined {
  const [top, second] = path.split('/');
  if (top === 'test') return second === 'kit' ? 'test/kit' : `test/${second}`;
  if (top === 'packages') return `packages/${second}`;
  return top;
}

function mayImport(from: string, to: string): boolean {
  if (from === to || to.startsWith('packages/')) return true;
  if (from.startsWith('test/') && from !== 'test/kit') {
    // A tier imports the kit, fixtures and data, and any product code; never another tier.
    return !to.startsWith('test/') || to === 'test/kit' || to === 'test/fixtures' || to === 'test/histories';
  }
  if (from === 'test/kit') return MAY_IMPORT['test/kit']!.includes(to) || to === 'test/fixtures';
  return MAY_IMPORT[from]?.includes(to) ?? false;
}

const SPECIFIER =
  /(?:\bfrom\s+|\bimport\s*\(\s*|\brequire\s*\(\s*|\bjest\.(?:mock|requireActual)\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g;

function violations(): string[] {
  const files = execFileSync('git', ['ls-files', '*.ts'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((f) => f !== '' && !f.startsWith('test/fixtures/') && !f.startsWith('packages/'));
  const out: string[] = [];
  for (const file of files) {
    const from = layerOf(file);
    if (from === undefined) continue;
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const m of text.matchAll(SPECIFIER)) {
      const target = relative(ROOT, normalize(join(ROOT, dirname(file), m[1]!)))
        .split(sep)
        .join('/');
      const to = layerOf(target);
      if (to !== undefined && !mayImport(from, to)) out.push(`${file} (${from}) imports ${m[1]} (${to})`);
    }
  }
  return out;
}

test('no import runs against the layering', () => {
  expect(violations()).toEqual([]);
});

test('every top-level folder is a layer, the docs or the deployment files, and the map lists each', () => {
  const tops = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((f) => f.includes('/'))
    .map((f) => f.split('/')[0]!);
  const folders = [...new Set(tops)].filter((f) => !f.startsWith('.')).sort();
  expect(folders).toEqual([...PRODUCT, 'deploy', 'docs', 'packages', 'test'].sort());
  expect(folders.length).toBeLessThanOrEqual(15);
  const map = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
  for (const folder of folders) expect(map).toContain(`| \`${folder}/\``);
});

test('the test tiers are the folders Jest runs, besides the kit, fixtures and histories', () => {
  const dirs = execFileSync('git', ['ls-files', 'test'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((f) => f.split('/').length > 2)
    .map((f) => f.split('/')[1]!);
  const tiers = [...new Set(dirs)].filter((d) => !['kit', 'fixtures', 'histories'].includes(d));
  for (const tier of tiers) expect(TEST_TIERS).toContain(tier);
});
