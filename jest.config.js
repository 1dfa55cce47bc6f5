/**
 * Jest runs the TypeScript sources directly through SWC; type-checking is `npm run typecheck`.
 * Projects: `unit` (pure code, no services), `integration` (real Temporal dev server and real
 * PostgreSQL, started once by the integration project's global setup and shared by its test files),
 * `time-skipping` (the real workflows on Temporal's time-skipping test server with stub activities, for
 * hours and days of workflow time in seconds; each test starts its own test server) and `faults` (below).
 */
const { homedir } = require('node:os');
const { join } = require('node:path');

const transform = {
  '^.+\\.ts$': [
    '@swc/jest',
    { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } },
  ],
};

/**
 * The crawler package (packages/crawler, `@target-health/crawler`) is imported by its name, through the
 * workspace link; under this condition its exports point at its TypeScript sources, so tests run on
 * them and need no build of the package (the type-check resolves the same condition: tsconfig.json).
 */
const testEnvironmentOptions = { customExportConditions: ['node', 'node-addons', '@target-health/source'] };

/**
 * Vega and Vega-Lite are ES modules, which Jest's CommonJS runtime cannot load (tools/charts/render.ts imports
 * them); both packages ship a UMD build of the same release, which it can. So unit tests render the real SVG
 * of a chart and read it, and integration tests run the console's pages, which draw charts, in process.
 */
const vegaAsCommonJs = {
  '^vega$': '<rootDir>/node_modules/vega/build/vega.js',
  '^vega-lite$': '<rootDir>/node_modules/vega-lite/build/vega-lite.min.js',
};

/**
 * Jest's cache (SWC's transforms, and each file's last duration, which orders the next run: longest
 * first) lives per machine beside the Temporal and Python caches, so a fresh clone on a machine that ran
 * the suite before starts in the right order. Each project has a fixed id: Jest would derive one from
 * the clone's path, and a new clone would find no durations.
 */
const cacheBase = process.env.XDG_CACHE_HOME ? process.env.XDG_CACHE_HOME : join(homedir(), '.cache');
const cacheDirectory = join(cacheBase, 'target-health', 'jest');

/** @type {import('jest').Config} */
module.exports = {
  // Four files at once on two cores: most integration files spend their time waiting on real ticks,
  // processes and services (at two workers the cores were idle half the run), and the unit files that
  // do not wait fill the gaps. The suite is meant to pass on a busy machine, and does at four.
  maxWorkers: 4,
  testSequencer: '<rootDir>/test/setup/sequencer.cjs',
  // Integration tests start processes and wait for real ticks; their own waits are bounded tighter.
  testTimeout: 120_000,
  projects: [
    {
      displayName: 'unit',
      id: 'target-health-unit',
      testEnvironment: 'node',
      testEnvironmentOptions,
      roots: ['<rootDir>/test/unit'],
      testMatch: ['**/*.test.ts'],
      moduleNameMapper: vegaAsCommonJs,
      transform,
      cacheDirectory,
    },
    {
      displayName: 'integration',
      id: 'target-health-integration',
      testEnvironment: 'node',
      testEnvironmentOptions,
      roots: ['<rootDir>/test/integration'],
      testMatch: ['**/*.test.ts'],
      // The console's pages render charts in the API process the tests start in-process.
      moduleNameMapper: vegaAsCommonJs,
      transform,
      cacheDirectory,
      globalSetup: '<rootDir>/test/setup/global-setup.ts',
      globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
    },
    {
      displayName: 'time-skipping',
      id: 'target-health-time-skipping',
      testEnvironment: 'node',
      testEnvironmentOptions,
      roots: ['<rootDir>/test/time-skipping'],
      testMatch: ['**/*.test.ts'],
      transform,
      cacheDirectory,
      globalSetup: '<rootDir>/test/setup/time-skipping-setup.ts',
      globalTeardown: '<rootDir>/test/setup/time-skipping-teardown.ts',
    },
    {
      // Each fault test starts its own Temporal dev server, PostgreSQL and worker processes, and breaks
      // them (test/faults, docs/testing.md). CI-sized under `npm test`; `npm run test:faults`: full form.
      displayName: 'faults',
      id: 'target-health-faults',
      testEnvironment: 'node',
      testEnvironmentOptions,
      roots: ['<rootDir>/test/faults'],
      testMatch: ['**/*.test.ts'],
      transform,
      cacheDirectory,
    },
    {
      // The production path (stack/cluster): the Temporal server built from source on PostgreSQL, two
      // worker processes. Its global setup builds the server and UI server into the per-machine cache
      // on first use (minutes, once), with progress lines.
      displayName: 'cluster',
      id: 'target-health-cluster',
      testEnvironment: 'node',
      testEnvironmentOptions,
      roots: ['<rootDir>/test/cluster'],
      testMatch: ['**/*.test.ts'],
      transform,
      cacheDirectory,
      globalSetup: '<rootDir>/test/setup/cluster-setup.ts',
    },
  ],
};
