/**
 * The Node.js the README names is the one every installed package supports: no `npm ci` warns
 * EBADENGINE on it (as once vega-lite 6.5.0 and cookie 2.0.2, under light-my-request,
 * declared Node >= 22 while the README, package.json and CI say 20.19). Checked on the lockfile, what
 * `npm ci` installs, with npm's own range grammar (semver).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- semver 6 (a devDependency) ships no types
const semver = require('semver') as {
  satisfies(version: string, range: string): boolean;
  minVersion(range: string): { version: string } | null;
};

const ROOT = join(__dirname, '..', '..');
const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');

interface Lockfile {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[] }>;
}

test('the README, package.json and every locked package agree on the Node.js version', () => {
  const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
  const minimum = semver.minVersion(engines)!.version;
  expect(minimum).toBe('20.19.0');
  expect(read('README.md')).toContain('Requirements: Node.js 20.19+');
  const lock = JSON.parse(read('package-lock.json')) as Lockfile;
  const refusing = Object.entries(lock.packages)
    .filter(([path]) => path !== '')
    .flatMap(([path, p]) => {
      const node = Array.isArray(p.engines) ? undefined : p.engines?.node;
      return node === undefined || semver.satisfies(minimum, node)
        ? []
        : [`${path.replace(/^.*node_modules\//, '')}@${p.version} needs node ${node}`];
    });
  expect(refusing).toEqual([]);
  // The check is real: a range the minimum misses is found.
  expect(semver.satisfies(minimum, '>=22')).toBe(false);
});
