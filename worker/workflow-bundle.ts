/**
 * How the workflow code is bundled — the same for the worker (which bundles at start) and for the tests'
 * and benchmarks' pre-built bundles, so every one of them runs what production runs.
 *
 * `preloadModules`: the workflows' pure modules (the control core, scoring, zod) are loaded once into the
 * worker's shared V8 context instead of once per cached workflow. Loaded per workflow they cost each
 * cached loop ≈ 2.3 MB and ≈ 0.1 s of worker CPU when the loop is created or replayed (docs/operations.md
 * "Worker memory"); shared, a loop costs about what an empty timer loop does.
 *
 * What sharing asks of those modules (checked by test/unit/workflow-bundle.test.ts):
 * - no module-level mutable state (one copy serves every workflow on the worker);
 * - nothing from `@temporalio/*` (the workflow library keeps per-workflow state) and nothing from
 *   `workflows/` (the workflow functions, their inboxes and patches stay per workflow);
 * - no exported zod schema: the SDK deep-freezes what shared modules export, and zod memoises its
 *   parsers on the schema objects at first use, which a frozen schema refuses ("Cannot define property
 *   …, object is not extensible"). Schemas stay module-private and leave through functions
 *   (`controlsSchema()`): a closure is not reached by the freeze.
 */

import type { BundleOptions } from '@temporalio/worker';

/**
 * The roots the workflows import from the shared core; their imports load with them. A module the
 * workflows import that is neither listed nor reached from here (nor one of the per-workflow modules
 * below) fails the bundle test.
 */
const SHARED_ROOTS = [
  '../core/canaries/band-floor',
  '@target-health/crawler/events/well-formed',
  '@target-health/crawler/events/zod-issues',
  '../core/control/config',
  '../core/control/controls',
  '../core/control/decide',
  '../core/control/decisions',
  '../core/control/details',
  '../core/control/keys',
  '../core/control/loop-state',
  '../core/control/notices',
  '../core/control/plan',
  '../core/control/plan/failed',
  '../core/control/schedule',
  '../core/control/settings-change',
  '../loop/state-view',
] as const;

/**
 * Modules instantiated per workflow, besides `workflows/` itself: they define messages and search attributes with the
 * SDK.
 */
export const PER_WORKFLOW_MODULES = ['loop/messages', 'loop/attributes', 'loop/search-attributes'] as const;

/** The preloaded modules as absolute paths (`.ts` under the tests, `.js` in `dist/`). */
export function sharedWorkflowModules(): string[] {
  return ['zod', ...SHARED_ROOTS.map((root) => require.resolve(root))];
}

/**
 * The export condition under which the crawler package (`@target-health/crawler`, packages/crawler)
 * serves its TypeScript sources instead of its built `dist/`. Jest and the type-check resolve it; Node
 * does not.
 */
const CRAWLER_SOURCE_CONDITION = '@target-health/source';

/**
 * Webpack resolves the crawler package as this process does: its sources where this process loads them
 * (under Jest), its `dist/` otherwise. Otherwise a test's bundle would hold the preloaded sources and,
 * beside them, the built copy the workflows' imports reach — two copies of one module.
 */
function crawlerPackageHook(): BundleOptions['webpackConfigHook'] {
  if (!require.resolve('@target-health/crawler/events/site').endsWith('.ts')) return undefined;
  return (config) => ({ ...config, resolve: { ...config.resolve, conditionNames: [CRAWLER_SOURCE_CONDITION, '...'] } });
}

/** The options `bundleWorkflowCode` and `Worker.create` take (`bundlerOptions`). */
export function bundlerOptions(): Pick<BundleOptions, 'preloadModules' | 'webpackConfigHook'> {
  const webpackConfigHook = crawlerPackageHook();
  return { preloadModules: sharedWorkflowModules(), ...(webpackConfigHook ? { webpackConfigHook } : {}) };
}
