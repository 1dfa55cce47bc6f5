/**
 * Fuzzing canary definitions: `canary add --file` (parseCanaryDefinition) and `canary import`
 * (parseCanaryFile), checked with the real selector engine, route table and reach policy as the CLI
 * does (server/canary-runner/define.ts). Inputs: a valid definition with fields replaced by hostile values
 * (arbitrary JSON, NUL, lone surrogates, control characters, megabyte strings, prototype keys, deep
 * nesting, numbers at the edges), broken checks, unknown fields, and arbitrary values outright.
 *
 * Properties: nothing throws; a refusal lists one or more lines, each one line, bounded, well formed and
 * starting with the field it is about; an accepted definition is storable (every string well formed,
 * name, URL, interval and timeout within their rules) and its stored JSON form reads back to the same
 * definition; a file is all or nothing. A proxy password never appears in a refusal.
 */
import fc from 'fast-check';
import {
  CANARY_NAME,
  type CanaryDefinition,
  INTERVAL_LIMITS,
  TIMEOUT_LIMITS,
  definitionToJson,
  parseCanaryDefinition,
  parseCanaryFile,
  readStoredDefinition,
} from '../../../core/canaries/definition';
import { definitionOptions } from '../../../server/canary-runner/define';
import { loadCanarySettings } from '../../../server/canary-runner/settings';
import { isWellFormed } from '@target-health/crawler/events/well-formed';
import {
  FUZZ_RUNS,
  fuzzParameters,
  anyValue,
  edgeNumber,
  hostileKey,
  messageProblems,
  nastyShortString,
  nastyString,
  objectOf,
} from '../../kit/hostile-fuzz';

const PASSWORD = 'Pw-s3cr3t/x:y@z';
const settings = loadCanarySettings({
  TARGET_HEALTH_ROUTES: JSON.stringify({ 'residential-de': 'http://user:gw-secret@gw.proxy.example:8000' }),
});
const SITE = 'shop.example.com';
const options = definitionOptions(settings, SITE);

/** Longest refusal line (core/canaries/definition.ts caps them at 1,000). */
const MAX_LINE = 1_000;
// A field path as the formatters write it: plain names or JSON-quoted odd ones, joined by "." and "[i]".
const NAME = String.raw`(?:[\w$-]+|"(?:[^"\\]|\\.)*")`;
const FIELD_LINE = new RegExp(String.raw`^${NAME}(?:\.${NAME}|\[\d+\])*: \S`);

const VALID = {
  name: 'price-trailrunner',
  url: 'https://shop.example.com/p/trailrunner-gtx-4',
  route: 'residential-de',
  interval: '15m',
  expect: [
    { status: 200 },
    { css: '.price', equals: '$139.95' },
    { json: '/offers/price', between: [100, 200] },
    { absent: 'Out of stock' },
  ],
};

/** Values people write in each field, right and wrong. */
const plausible: Record<string, fc.Arbitrary<unknown>> = {
  name: fc.constantFrom('price', 'Price', 'a'.repeat(65), '-x', 'p.1', ''),
  url: fc.constantFrom(
    'https://shop.example.com/p/1',
    'http://shop.example.com',
    'https://api.shop.example.com/v1',
    'https://10.0.0.1/',
    'http://169.254.169.254/latest',
    'http://[::1]:8233/',
    'ftp://shop.example.com/',
    'https://',
    `https://intranet.example.net/${'p'.repeat(9_000)}`,
  ),
  proxy: fc.constantFrom(
    `http://user:${PASSWORD}@proxy.example:8000`,
    `http://user:${PASSWORD}@proxy.example`,
    `socks5://u:${PASSWORD}@h:1080`,
    'http://proxy.example:8000/path',
    `http://u:${PASSWORD}@:80`,
    `http://u:${PASSWORD}@proxy.example:8000/x`,
    'localhost:8080',
  ),
  route: fc.constantFrom('residential-de', 'unknown', 'a b', ''),
  interval: fc.oneof(fc.constantFrom('15m', '30s', '29s', '7d', '8d', '-1m', '0s', '1e3s', '', '15 m'), edgeNumber),
  timeout: fc.oneof(fc.constantFrom('20s', '99ms', '2m', '3m'), edgeNumber),
  pageType: fc.constantFrom('product', 'a/b:c', 'bad type', ''),
};

/** One check: right, wrong in a typical way, or anything. */
const check: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    { status: 200 },
    { status: [200, 203] },
    { status: 99 },
    { status: [] },
    { css: '.price', equals: '$139.95' },
    { css: '.price[', equals: 'x' },
    { css: '.price', attr: 'content', between: [100, 200] },
    { css: '.price', between: [200, 100] },
    { css: 'li', count: 3, attr: 'x' },
    { css: 'li', atLeast: -1 },
    { css: '.t', matches: '^(\\d+)+$' },
    { css: '.t', matches: '(?=x)' },
    { css: '.t', matches: '(\n' },
    { css: '.t' },
    { css: '.t', equals: 'a', matches: 'b' },
    { json: '/a~2', equals: 1 },
    { json: '', equals: null },
    { json: '/offers/price', equals: { nested: [1, { deep: true }] } },
    { absent: '' },
    { selector: '.price', equals: 'x' },
    { css: '.price', json: '/a', equals: 1 },
  ),
  fc.record(
    {
      css: fc.oneof(nastyShortString, fc.constantFrom('.price', 'a:has(', '::before')),
      equals: fc.oneof(nastyShortString, edgeNumber),
    },
    { requiredKeys: ['css'] },
  ),
  fc.record({ css: fc.constant('.t'), matches: nastyShortString }),
  fc.record({ json: nastyShortString, equals: anyValue }),
  fc.record({ absent: nastyString }),
  fc.array(fc.tuple(hostileKey, anyValue), { maxLength: 3 }).map(objectOf),
  anyValue,
);

const FIELDS = ['name', 'url', 'proxy', 'route', 'interval', 'timeout', 'pageType', 'expect'] as const;

/** A change to a valid definition. */
const change = fc.oneof(
  fc
    .constantFrom(...FIELDS.filter((f) => f !== 'expect'))
    .chain((field) => fc.oneof(plausible[field]!, nastyString, anyValue).map((value) => ({ set: field, value }))),
  fc.array(check, { maxLength: 4 }).map((value) => ({ set: 'expect', value })),
  fc.oneof(nastyString, anyValue).map((value) => ({ set: 'expect', value })),
  fc.tuple(hostileKey, anyValue).map(([set, value]) => ({ set, value })),
  fc.constantFrom(...FIELDS).map((field) => ({ drop: field })),
);
type Change = { set: string; value: unknown } | { drop: string };

function applyChanges(base: Record<string, unknown>, changes: readonly Change[]): Record<string, unknown> {
  const entries = new Map(Object.entries(base));
  for (const c of changes) {
    if ('drop' in c) entries.delete(c.drop);
    else entries.set(c.set, c.value);
  }
  return objectOf([...entries]);
}

const definitionInput: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.array(change, { maxLength: 3 }).map((changes) => applyChanges(VALID, changes as Change[])),
  },
  { weight: 1, arbitrary: anyValue },
);

/** Every string in a value, keys included (iterative: values may be deeply nested). */
function strings(value: unknown): string[] {
  const out: string[] = [];
  const stack = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) stack.push(...(v as unknown[]));
    else if (v !== null && typeof v === 'object') for (const [k, child] of Object.entries(v)) stack.push(k, child);
  }
  return out;
}

function refusalProblems(errors: readonly string[]): string[] {
  if (errors.length === 0) return ['refused with no reason'];
  return errors.flatMap((line) => [
    ...messageProblems(line, FIELD_LINE, MAX_LINE),
    ...(line.includes(PASSWORD) || line.includes(encodeURIComponent(PASSWORD))
      ? [`shows the proxy password: ${line.slice(0, 200)}`]
      : []),
  ]);
}

function acceptedProblems(d: CanaryDefinition): string[] {
  const problems: string[] = [];
  if (!strings(d).every(isWellFormed)) problems.push('a string is not storable');
  if (!CANARY_NAME.test(d.name)) problems.push(`name ${JSON.stringify(d.name)}`);
  const url = new URL(d.url);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') problems.push(`url ${d.url}`);
  if (d.intervalMs < INTERVAL_LIMITS.minMs || d.intervalMs > INTERVAL_LIMITS.maxMs || !Number.isInteger(d.intervalMs))
    problems.push(`interval ${d.intervalMs}`);
  if (d.timeoutMs !== undefined && (d.timeoutMs < TIMEOUT_LIMITS.minMs || d.timeoutMs > TIMEOUT_LIMITS.maxMs))
    problems.push(`timeout ${d.timeoutMs}`);
  if (d.expect.length < 1 || d.expect.length > 50) problems.push(`${d.expect.length} checks`);
  // What is stored (the JSON form) reads back to the same definition, with and without the defining checks.
  const json = JSON.parse(JSON.stringify(definitionToJson(d))) as unknown;
  const again = parseCanaryDefinition(json, options);
  if (!again.ok || JSON.stringify(again.definition) !== JSON.stringify(d))
    problems.push(`does not read back: ${JSON.stringify(again).slice(0, 300)}`);
  const stored = readStoredDefinition(json);
  if (!stored.ok || JSON.stringify(stored.definition) !== JSON.stringify(d))
    problems.push('stored form does not read back');
  return problems;
}

describe('canary definitions under fuzzing', () => {
  test(
    `parseCanaryDefinition: a storable definition or one bounded line per problem naming the field (${FUZZ_RUNS} ` +
      `cases)`,
    () => {
      let accepted = 0;
      fc.assert(
        fc.property(definitionInput, (input) => {
          const result = parseCanaryDefinition(input, options);
          if (result.ok) {
            accepted += 1;
            expect(acceptedProblems(result.definition)).toEqual([]);
          } else {
            expect(refusalProblems(result.errors)).toEqual([]);
          }
        }),
        fuzzParameters(),
      );
      expect(accepted).toBeGreaterThan(FUZZ_RUNS / 10);
    },
  );

  const siteValue = fc.oneof(
    fc.constantFrom('shop.example.com', 'Shop.Example.COM', 'news.example.org', '', 'localhost'),
    nastyShortString,
  );
  const fileEntry = fc.oneof(
    {
      weight: 6,
      arbitrary: fc
        .tuple(
          fc.option(siteValue, { nil: undefined, freq: 3 }),
          fc.array(change, { maxLength: 2 }),
          fc.nat({ max: 3 }),
        )
        .map(([site, changes, n]) =>
          applyChanges({ site: site ?? SITE, ...VALID, name: `c${n}` }, changes as Change[]),
        ),
    },
    { weight: 1, arbitrary: anyValue },
  );
  const fileInput: fc.Arbitrary<unknown> = fc.oneof(
    {
      weight: 8,
      arbitrary: fc
        .tuple(fc.array(fileEntry, { maxLength: 5 }), fc.array(fc.tuple(hostileKey, anyValue), { maxLength: 1 }))
        .map(([canaries, extra]) => objectOf([['canaries', canaries], ...extra])),
    },
    { weight: 1, arbitrary: anyValue },
  );

  test(
    `parseCanaryFile: all entries or none; refusals one bounded line each naming the entry and field ` +
      `(${FUZZ_RUNS} cases)`,
    () => {
      let accepted = 0;
      fc.assert(
        fc.property(fileInput, (input) => {
          const result = parseCanaryFile(input, definitionOptions(settings));
          if (result.ok) {
            accepted += 1;
            const listed = (input as { canaries: unknown[] }).canaries;
            expect(result.entries).toHaveLength(listed.length);
            const ids = new Set(result.entries.map((e) => `${e.site}/${e.definition.name}`));
            expect(ids.size).toBe(result.entries.length);
            for (const e of result.entries) {
              expect(e.site).toMatch(/^[a-z0-9.-]+$/);
              expect(acceptedProblems(e.definition)).toEqual([]);
            }
          } else {
            expect(refusalProblems(result.errors)).toEqual([]);
          }
        }),
        fuzzParameters(),
      );
      expect(accepted).toBeGreaterThan(FUZZ_RUNS / 20);
    },
  );
});
