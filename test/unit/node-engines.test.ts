/**
 * The Node.js the README names is the one every installed package supports: no `npm ci` warns
 * EBADENGINE on it (issue 26, point 18: vega-lite 6.5.0 and cookie 2.0.2, under light-my-request,
 * declared Node >= 22 while the README, package.json and CI say 20.19). Checked on the lockfile, what
 * `npm ci` installs, with npm's own range grammar (semver).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- semver 6 (a devDependency) ships no types
const semver = require('semver') as { satisfies(version: string, range: string): boolean; minVersion(range: string): { version: string } | null };

const ROOT = join(__dirname, '..', '..');
const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');

interface LockEntry {
  version?: string;
  engines?: { node?: string } | string[];
  dev?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}
interface Lockfile {
  packages: Record<string, LockEntry>;
}

/**
 * The one known exception: `is-antibot`, the classifier benchmark's peer (a devDependency the product
 * never loads; bench:classify and its test only), pulls in @metascraper/helpers, jsdom, re2… that declare
 * Node >= 22. It runs on 20.19+ (measured: bench:classify); `npm ci` warns EBADENGINE for these only.
 * Exempt: what only is-antibot needs — reachable from it and from no other root dependency.
 */
const PEER_ONLY_ROOTS = ['is-antibot'];

/** The lock paths reachable from `roots` (node_modules resolution: nearest nested copy first). */
function closure(lock: Lockfile, roots: readonly string[]): Set<string> {
  const resolve = (from: string, name: string): string | undefined => {
    for (let base = from; ; ) {
      const path = `${base === '' ? '' : `${base}/`}node_modules/${name}`;
      if (lock.packages[path] !== undefined) return path;
      if (base === '') return undefined;
      const cut = base.lastIndexOf('/node_modules/');
      base = cut === -1 ? '' : base.slice(0, cut);
    }
  };
  const seen = new Set<string>();
  const todo = roots.map((name) => resolve('', name)).filter((p): p is string => p !== undefined);
  while (todo.length > 0) {
    const path = todo.pop()!;
    if (seen.has(path)) continue;
    seen.add(path);
    const entry = lock.packages[path]!;
    for (const name of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies })) {
      const dep = resolve(path, name);
      if (dep !== undefined) todo.push(dep);
    }
  }
  return seen;
}

test('the README, package.json and every locked package agree on the Node.js version', () => {
  const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
  const minimum = semver.minVersion(engines)!.version;
  expect(minimum).toBe('20.19.0');
  expect(read('README.md')).toContain('Requirements: Node.js 20.19+');
  const lock = JSON.parse(read('package-lock.json')) as Lockfile;
  const root = lock.packages[''] as LockEntry & { devDependencies?: Record<string, string> };
  const others = Object.keys({ ...root.dependencies, ...root.devDependencies }).filter((n) => !PEER_ONLY_ROOTS.includes(n));
  const needed = closure(lock, others);
  const peerOnly = [...closure(lock, PEER_ONLY_ROOTS)].filter((p) => !needed.has(p));
  // Each exempt package is a dev-only install (never in a production install of the product).
  expect(peerOnly.filter((p) => lock.packages[p]!.dev !== true)).toEqual([]);
  const exempt = new Set(peerOnly);
  const refusing = Object.entries(lock.packages)
    .filter(([path]) => path !== '' && !exempt.has(path))
    .flatMap(([path, p]) => {
      const node = Array.isArray(p.engines) ? undefined : p.engines?.node;
      return node === undefined || semver.satisfies(minimum, node) ? [] : [`${path.replace(/^.*node_modules\//, '')}@${p.version} needs node ${node}`];
    });
  expect(refusing).toEqual([]);
  // The check is real: a range the minimum misses is found.
  expect(semver.satisfies(minimum, '>=22')).toBe(false);
});
