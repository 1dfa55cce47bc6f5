/**
 * Locations inside the project, valid both from the TypeScript sources (tests) and from the compiled
 * `dist/` tree (the CLI, the worker): both are found relative to the directory holding package.json.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

function findProjectRoot(start: string): string {
  let dir = start;
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'server', 'db', 'migrations'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find the target-health project root above ${start}`);
    dir = parent;
  }
}

export const PROJECT_ROOT = findProjectRoot(resolve(__dirname));
export const MIGRATIONS_DIR = join(PROJECT_ROOT, 'server', 'db', 'migrations');
