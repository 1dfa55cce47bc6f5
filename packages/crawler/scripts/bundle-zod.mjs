/**
 * After tsc: replaces dist/zod.js (tsc's `export … from 'zod'`) with a bundle of only the parts of zod that
 * src/zod.ts names: esbuild, from zod's ES modules (so unused schemas and the ~50 locales are left out),
 * minified, for Node.js 16, with zod's MIT licence on top. The installed package then has no zod
 * dependency (zod 4 installs ~6 MB) and loads in a few ms instead of ~70.
 *
 * dist/zod.d.ts keeps pointing at zod's types: only the server-side deep imports (schemas) reach it; the
 * public entry points' declarations do not (test/integration/crawler-install.test.ts type-checks them in
 * a project without zod).
 */
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(pkg, 'package.json'));
const zodDir = dirname(require.resolve('zod/package.json'));
const zodVersion = JSON.parse(readFileSync(join(zodDir, 'package.json'), 'utf8')).version;
const licence = readFileSync(join(zodDir, 'LICENSE'), 'utf8').trim();

await build({
  entryPoints: [join(pkg, 'src', 'zod.ts')],
  outfile: join(pkg, 'dist', 'zod.js'),
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node16',
  minify: true,
  legalComments: 'none',
  banner: { js: `/*! zod ${zodVersion} (https://zod.dev), bundled: only the parts this package uses.\n${licence}\n*/` },
  logLevel: 'warning',
});
