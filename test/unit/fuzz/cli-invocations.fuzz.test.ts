/**
 * The built CLI (`client/bin/target-health.js` → dist/, which `npm test` builds first) run as a real process
 * with fuzzed arguments: `decide`, `start`, `canary add`, `ingest --dry-run`, `status`,
 * `retention`. No services: a command whose arguments pass stops at the first setting it lacks
 * (DATABASE_URL unset, TEMPORAL_ADDRESS malformed), so every case ends in a refusal.
 *
 * Properties: exit code 2 (0 for a dry run of nothing); stderr holds one `target-health: …` message
 * and no stack trace; where a pure parser says what is wrong (client/ and core/canaries/ — see
 * cli-args.fuzz.test.ts), stderr is exactly that message. Arguments are what a shell can pass: no NUL,
 * and text that is not valid UTF-8 arrives as U+FFFD.
 *
 * TH_FUZZ_CLI_RUNS sets the number of invocations (default 50); TH_FUZZ_SEED replays a run.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { asFlags, decisionPayload } from '../../../client/commands/decide';
import { startSettings } from '../../../client/commands/start';
import { type CanaryFlags, definitionFromFlags } from '../../../client/commands/canary-flags';
import { siteArgument } from '../../../client/site-arg';
import { parseCanaryDefinition } from '../../../core/canaries/definition';
import { definitionOptions } from '../../../server/canary-runner/define';
import { loadCanarySettings } from '../../../server/canary-runner/settings';
import { UserError } from '../../../core/common/user-error';
import { DECISION_KINDS, type DecisionKind, parseDecision } from '../../../core/control/decisions';
import { CLI, ROOT, cleanEnv, run } from '../../kit/processes';
import { hasRawControl, nastyShortString } from '../../kit/hostile-fuzz';
import { runs } from '../../kit/sizes';

const RUNS = Number(process.env.TH_FUZZ_CLI_RUNS ?? runs(50));
const SEED = Number(process.env.TH_FUZZ_SEED ?? Date.now() % 2 ** 31);
const PARALLEL = 4;
/** No database, and a Temporal address the CLI refuses before connecting: nothing is reached. */
const ENV = cleanEnv({ TEMPORAL_ADDRESS: 'not an address' });

/** What reaches a program through argv: no NUL (the OS cannot pass it), UTF-8 (a lone surrogate becomes U+FFFD). */
const asArgv = (s: string): string => Buffer.from(s.replaceAll('\u0000', ''), 'utf8').toString('utf8');
const text = (plausible: readonly string[]): fc.Arbitrary<string> =>
  fc
    .oneof(
      { weight: 3, arbitrary: fc.constantFrom(...plausible) },
      { weight: 2, arbitrary: nastyShortString },
      { weight: 1, arbitrary: fc.constantFrom('-x', '--who', '', ' ', 'x'.repeat(5_000)) },
    )
    .map(asArgv);
const site = text([
  'shop.example.com',
  'Shop.Example.COM',
  'https://shop.example.com/p/1',
  'localhost',
  'a..b',
  '[::1]',
]);
const duration = text(['30s', '5m', '0s', '-1s', '25d', '1e3', '90', '1.5h', 'soon']);

/** The refusal a pure parser predicts, or undefined when the arguments pass (or no pure parser covers them). */
type Case = { args: string[]; expected: () => string | undefined; valid: RegExp };

const tryRefusal = (check: () => void): string | undefined => {
  try {
    check();
    return undefined;
  } catch (err) {
    if (err instanceof UserError) return err.message;
    throw err;
  }
};

const decideCase: fc.Arbitrary<Case> = fc
  .record({
    kind: fc.constantFrom(...DECISION_KINDS),
    site,
    who: text(['alice@example.com', 'bob']),
    why: text(['checked the terms']),
    mode: fc.option(text(['cautious', 'explicit', 'fast']), { nil: undefined }),
    concurrency: fc.option(text(['4', '0', '1e3', 'x', ' 4 ']), { nil: undefined }),
    revisit: fc.option(text(['2', '0.5', 'Infinity']), { nil: undefined }),
  })
  .map((o) => {
    const kind: DecisionKind = o.kind;
    const flags = {
      who: o.who,
      why: o.why,
      ...(kind === 'resume' ? { mode: o.mode, concurrency: o.concurrency, revisit: o.revisit } : {}),
    };
    const args = ['decide', kind, '--who', o.who, '--why', o.why];
    if (kind === 'resume')
      for (const [flag, v] of [
        ['--mode', o.mode],
        ['--concurrency', o.concurrency],
        ['--revisit', o.revisit],
      ] as const)
        if (v !== undefined) args.push(flag, v);
    return {
      args: [...args, '--', o.site],
      expected: () =>
        tryRefusal(() => {
          siteArgument(o.site);
          const checked = parseDecision(kind, decisionPayload(kind, flags));
          if (!checked.ok) throw new UserError(asFlags(checked.message));
        }),
      valid: /^TEMPORAL_ADDRESS: /,
    };
  });

const startCase: fc.Arbitrary<Case> = fc.record({ site, tick: duration }).map((o) => ({
  args: ['start', '--tick', o.tick, '--', o.site],
  expected: () => tryRefusal(() => startSettings(o.site, { tick: o.tick })),
  valid: /^DATABASE_URL: /,
}));

const canaryCase: fc.Arbitrary<Case> = fc
  .record({
    site,
    url: text(['https://shop.example.com/p/1', 'https://10.0.0.1/', 'ftp://x']),
    css: text(['.price', '[', 'h1']),
    equals: text(['$139.95']),
    interval: fc.option(duration, { nil: undefined }),
    status: fc.option(text(['200', '200,203', '99']), { nil: undefined }),
  })
  .map((o) => {
    const flags: CanaryFlags = {
      url: o.url,
      expectText: o.css,
      equals: o.equals,
      ...(o.interval !== undefined ? { interval: o.interval } : {}),
      ...(o.status !== undefined ? { expectStatus: o.status } : {}),
    };
    const args = ['canary', 'add', '--url', o.url, '--expect-text', o.css, '--equals', o.equals];
    if (o.interval !== undefined) args.push('--interval', o.interval);
    if (o.status !== undefined) args.push('--expect-status', o.status);
    return {
      args: [...args, '--', o.site],
      expected: () =>
        tryRefusal(() => {
          const s = siteArgument(o.site);
          const built = definitionFromFlags(flags);
          if (!built.ok) throw new UserError(built.errors.join('\n'));
          const parsed = parseCanaryDefinition(built.json, definitionOptions(loadCanarySettings({}), s));
          if (!parsed.ok) throw new UserError(parsed.errors.map(built.flagOf).join('\n'));
        }),
      valid: /^DATABASE_URL: /,
    };
  });

/** Commands whose checks live in their action: the message must still name the flag. */
const inlineCase: fc.Arbitrary<Case> = fc.oneof(
  fc.record({ batch: text(['10000', '0', '100001', '1.5', '1e3']), timeout: duration }).map((o) => ({
    args: ['ingest', '-', '--dry-run', '--batch-size', o.batch, '--timeout', o.timeout],
    expected: () => undefined,
    valid: /^--(?:batch-size|timeout): /,
  })),
  fc.record({ site, history: text(['10', '-1', '1.5', 'all']) }).map((o) => ({
    args: ['status', '--history', o.history, '--', o.site],
    expected: () => tryRefusal(() => siteArgument(o.site)),
    valid: /^(?:--history|TEMPORAL_ADDRESS): /,
  })),
  fc.record({ days: text(['7', '0', '-1', '1e3', 'x']) }).map((o) => ({
    args: ['retention', '--raw-days', o.days],
    expected: () => undefined,
    valid: /^(?:--raw-days|DATABASE_URL): /,
  })),
  fc
    .record({
      site,
      shift: text(['-2d', '12h', '-40d', 'two days', '1e3d']),
      from: text(['-2h', '2026-11-30', 'yesterday']),
    })
    .map((o) => ({
      args: ['export', '--shift', o.shift, '--from', o.from, '--', o.site],
      expected: () => tryRefusal(() => siteArgument(o.site)),
      valid: /^(?:--shift|--from|DATABASE_URL): /,
    })),
);

const invocation = fc.oneof(decideCase, startCase, canaryCase, inlineCase);

test(`the built CLI refuses ${RUNS} fuzzed invocations with exit code 2 and one message, no stack trace`, async () => {
  if (!existsSync(join(ROOT, 'dist', 'client', 'main.js')))
    throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
  process.stderr.write(`[fuzz-cli] seed ${SEED} (TH_FUZZ_SEED=${SEED} replays it), ${RUNS} invocations\n`);
  const cases = fc.sample(invocation, { seed: SEED, numRuns: RUNS });
  const problems: string[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < cases.length; i = next++) {
      const c = cases[i]!;
      const r = await run(CLI, c.args, ENV);
      const shown = `case ${i} ${JSON.stringify(c.args.map((a) => (a.length > 60 ? `${a.slice(0, 60)}…` : a)))}`;
      const expected = c.expected();
      const stderr = r.stderr.replace(/\n$/, '');
      if (/unexpected error|\n\s+at /.test(r.stderr))
        problems.push(`${shown}: a stack trace: ${r.stderr.slice(0, 400)}`);
      if (r.code === 0) {
        if (!c.args.includes('--dry-run')) problems.push(`${shown}: exit 0`);
        continue;
      }
      if (r.code !== 2) problems.push(`${shown}: exit ${r.code}: ${stderr.slice(0, 300)}`);
      if (!stderr.startsWith('target-health: '))
        problems.push(`${shown}: stderr ${JSON.stringify(stderr.slice(0, 300))}`);
      const message = stderr.slice('target-health: '.length);
      // One message: one line, except `canary add`, which lists one line per problem.
      const lines = message.split('\n');
      if ((lines.length > 1 && c.args[0] !== 'canary') || lines.some(hasRawControl))
        problems.push(`${shown}: not one line: ${JSON.stringify(message.slice(0, 300))}`);
      if (expected !== undefined) {
        if (message !== expected)
          problems.push(
            `${shown}: said ${JSON.stringify(message.slice(0, 300))}, the parser says ` +
              `${JSON.stringify(expected.slice(0, 300))}`,
          );
      } else if (!c.valid.test(message) && !/^(?:site|--[a-z-]+): /.test(message)) {
        problems.push(`${shown}: names no flag or setting: ${JSON.stringify(message.slice(0, 300))}`);
      }
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  if (problems.length > 0) throw new Error(`seed ${SEED} (TH_FUZZ_SEED=${SEED} replays it):\n${problems.join('\n')}`);
});
