/**
 * The determinism lint (eslint.config.mjs: no Node builtins, no I/O libraries, no Date.now or
 * Math.random) must cover every project module that ends up in the workflow bundle. The bundle's own
 * source map says which modules those are, so a new import from workflow code into an uncovered
 * folder fails here rather than at replay time in production.
 */
import { relative, resolve } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { bundlerOptions } from '../../worker/workflow-bundle';
import { execFileSync } from 'node:child_process';

const ROOT = resolve(__dirname, '..', '..');
const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

async function bundledProjectModules(): Promise<string[]> {
  const bundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('../../workflows'),
    ...bundlerOptions(),
    logger: quiet,
  });
  // The bundle carries its source map inline; its `sources` are the modules webpack included.
  const inline = /sourceMappingURL=data:application\/json;(?:charset=utf-8;)?base64,([A-Za-z0-9+/=]+)/.exec(
    bundle.code,
  );
  if (inline === null) throw new Error('the workflow bundle has no inline source map');
  const map = JSON.parse(Buffer.from(inline[1]!, 'base64').toString('utf8')) as { sources: string[] };
  const files = map.sources
    .map((s) => s.replace(/^webpack:\/\/[^/]*\//, ''))
    .filter((s) => s.endsWith('.ts') && !s.includes('node_modules') && !s.startsWith('webpack/'))
    .map((s) => relative(ROOT, resolve(ROOT, s)));
  return [...new Set(files)].sort();
}

test('every project module in the workflow bundle is under the determinism lint', async () => {
  const modules = await bundledProjectModules();
  // The bundle holds at least the workflow, the control core and the scoring it uses.
  expect(modules).toEqual(
    expect.arrayContaining(['workflows/site-health.ts', 'core/control/plan/index.ts', 'core/scoring/site-state.ts']),
  );
  // ESLint's config is an ES module, which Jest's CommonJS runtime cannot load: ask a child Node.
  const script = `
    const { ESLint } = require('eslint');
    (async () => {
      const eslint = new ESLint({ cwd: process.cwd() });
      const out = [];
      for (const f of process.argv.slice(1)) {
        const rule = (await eslint.calculateConfigForFile(f)).rules?.['no-restricted-properties'];
        if (!Array.isArray(rule) || rule[0] === 0 || rule[0] === 'off') out.push(f);
      }
      process.stdout.write(JSON.stringify(out));
    })();`;
  const uncovered = JSON.parse(
    execFileSync(process.execPath, ['-e', script, ...modules], { cwd: ROOT, encoding: 'utf8' }),
  ) as string[];
  expect(uncovered).toEqual([]);
}, 60_000);
