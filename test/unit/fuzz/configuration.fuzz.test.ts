/**
 * Fuzzing configuration: the loop's start input (`parseSiteHealthInput`, what `start
 * --config` and a hand-started workflow send), the scoring configuration, the per-site classifier
 * configuration, and the environment every entry point reads (server/config/env.ts, canary settings) — with
 * hostile values (arbitrary JSON, NUL, lone surrogates, control characters, megabyte strings,
 * prototype keys, deep nesting, numbers at the edges) in valid configurations, and fuzzed env maps.
 *
 * Properties: nothing is thrown but the documented error (none, ScoringConfigError, UserError); every
 * refusal is one line, bounded, well formed and names the field or variable; what is accepted is
 * usable (numbers finite, windows whose bounds are real dates, a JSON round trip changes nothing); an
 * environment error never shows a secret (a database password, an API key, a webhook's path, a proxy
 * password of TARGET_HEALTH_ROUTES).
 */
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { loadCanarySettings } from '../../../server/canary-runner/settings';
import { UserError } from '../../../core/common/user-error';
import { MAX_LINE_CHARS, MAX_MESSAGE_CHARS } from '@target-health/crawler/events/zod-issues';
import {
  loadDatabaseUrl,
  loadLocalStackSettings,
  loadLogLevel,
  loadNotifierSettings,
  loadOptionalDatabaseUrl,
  loadTemporalSettings,
  loadTemporalUiUrl,
} from '../../../server/config/env';
import { parseSiteHealthInput } from '../../../core/control/config';
import { windowBounds } from '../../../server/db/signal-store/read-windows';
import { ScoringConfigError, parseScoringConfig } from '../../../core/scoring/config';
import { parseSiteClassifierConfig } from '@target-health/crawler/events/config';
import {
  FUZZ_RUNS,
  fuzzParameters,
  anyValue,
  describeThrown,
  edgeNumber,
  hostileKey,
  messageProblems,
  nastyShortString,
  nastyString,
  objectOf,
  thrownBy,
} from '../../kit/hostile-fuzz';

// A field path as the formatters write it: plain names or JSON-quoted odd ones, joined by "." and "[i]".
const NAME = String.raw`(?:[\w$-]+|"(?:[^"\\]|\\.)*")`;
const PATH = String.raw`${NAME}(?:\.${NAME}|\[\d+\])*`;
// A value that is not an object at all is refused as a whole (the caller's prefix names it).
const WHOLE = String.raw`Invalid input: expected object, received \S+$`;
const FIELD_LINE = new RegExp(`^(?:${PATH}: \\S|unknown fields? "|${WHOLE})`);

type Change = { at: readonly string[]; value: unknown } | { drop: readonly string[] };

/** `base` (a JSON object) with the changes applied at their paths; objects on the way are created. */
function changed(base: unknown, changes: readonly Change[]): unknown {
  const root = JSON.parse(JSON.stringify(base)) as Record<string, unknown>;
  for (const c of changes) {
    const path = 'at' in c ? c.at : c.drop;
    let node: Record<string, unknown> = root;
    for (const key of path.slice(0, -1)) {
      const next = node[key];
      if (next === null || typeof next !== 'object' || Array.isArray(next))
        Object.defineProperty(node, key, { value: {}, enumerable: true, writable: true, configurable: true });
      node = node[key] as Record<string, unknown>;
    }
    const last = path[path.length - 1]!;
    if ('at' in c)
      Object.defineProperty(node, last, { value: c.value, enumerable: true, writable: true, configurable: true });
    else delete node[last];
  }
  return root;
}

/** A change at one of `paths` (or a hostile key under one of their parents) to a plausible or hostile value. */
function changeOf(paths: ReadonlyArray<readonly string[]>, plausible: fc.Arbitrary<unknown>): fc.Arbitrary<Change> {
  const path = fc.constantFrom(...paths);
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc
        .tuple(path, fc.oneof({ weight: 3, arbitrary: plausible }, { weight: 2, arbitrary: anyValue }))
        .map(([at, value]) => ({ at, value })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(path, hostileKey, anyValue)
        .map(([at, key, value]) => ({ at: [...at.slice(0, -1), key], value })),
    },
    { weight: 1, arbitrary: path.map((p) => ({ drop: p })) },
  );
}

const plausibleNumber = fc.oneof(
  edgeNumber,
  fc.integer({ min: -10, max: 100 }),
  fc.double({ min: 0, max: 1, noNaN: true }),
  fc.constantFrom(1_000, 60_000, 86_400_000, 8.64e15, 2 ** 53 - 1),
);

/** Every number in a value (iterative). */
function numbers(value: unknown): number[] {
  const out: number[] = [];
  const stack = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'number') out.push(v);
    else if (v !== null && typeof v === 'object') stack.push(...(Object.values(v) as unknown[]));
  }
  return out;
}

describe('the loop input (start --config, a hand-started workflow)', () => {
  const SITE_INPUT_PATHS = [
    ['site'],
    ['tickIntervalMs'],
    ['maxTicksPerRun'],
    ['window', 'currentWindowMs'],
    ['window', 'baselineMs'],
    ['window', 'excludeRecentMs'],
    ['timeouts', 'activityMs'],
    ['scoring', 'health', 'weights', 'hard_block'],
    ['scoring', 'bands', 'healthyMin'],
    ['scoring', 'smoothing', 'halfLifeMs'],
    ['policy', 'concurrency', 'nominal'],
    ['policy', 'reminderIntervalMs'],
    ['policy', 'parserAlertBelow'],
    ['policy', 'parserAlertAfterMs'],
    ['policy', 'steps', 'degradeEveryMs'],
    ['policy', 'cost', 'minRelativeRaise'],
    ['carried'],
    ['window'],
    ['policy'],
  ] as const;
  const input = fc.oneof(
    {
      weight: 8,
      arbitrary: fc
        .array(
          changeOf(
            SITE_INPUT_PATHS,
            fc.oneof(
              plausibleNumber,
              fc.constantFrom('shop.example.com', 'Shop.Example.com', 'https://shop.example.com/', ''),
            ),
          ),
          { maxLength: 3 },
        )
        .map((c) => changed({ site: 'shop.example.com', tickIntervalMs: 60_000 }, c)),
    },
    { weight: 1, arbitrary: anyValue },
  );

  test(`parseSiteHealthInput: usable settings, or one bounded line naming the fields (${FUZZ_RUNS} cases)`, () => {
    let accepted = 0;
    const now = new Date(Date.UTC(2026, 10, 30, 12));
    fc.assert(
      fc.property(input, (raw) => {
        const result = parseSiteHealthInput(raw);
        if (!result.ok) {
          expect(messageProblems(result.message, FIELD_LINE, MAX_MESSAGE_CHARS)).toEqual([]);
          return;
        }
        accepted += 1;
        const v = result.value;
        expect(v.site).toMatch(/^[a-z0-9.-]+$/);
        expect(numbers(v).filter((n) => !Number.isFinite(n))).toEqual([]);
        // The windows it reads are real time ranges (a baseline of 2^53 ms would start before year -270,000).
        const bounds = windowBounds({ asOf: now, ...v.window });
        for (const d of [bounds.current.from, bounds.current.to, bounds.baseline.from, bounds.baseline.to])
          expect(Number.isNaN(d.getTime())).toBe(false);
        // What the workflow receives (JSON) is read the same (for inputs JSON can carry: not a Date, NaN or undefined).
        const json = JSON.parse(JSON.stringify(raw)) as unknown;
        if (isDeepStrictEqual(json, raw)) expect(parseSiteHealthInput(json)).toEqual(result);
      }),
      fuzzParameters(),
    );
    expect(accepted).toBeGreaterThan(FUZZ_RUNS / 10);
  });
});

describe('scoring configuration', () => {
  const SCORING_PATHS = [
    ['health', 'minRequests'],
    ['health', 'weights', 'hard_block'],
    ['health', 'weights', 'latency'],
    ['health', 'caps', 'rateExcess'],
    ['health', 'caps', 'latencyMultiple'],
    ['parser', 'weights', 'extraction_empty'],
    ['cost', 'reasonRatio'],
    ['cost', 'floors', 'bytesPerRecord'],
    ['routes', 'alpha'],
    ['smoothing', 'halfLifeMs'],
    ['bands', 'healthyMin'],
    ['bands', 'degradingMin'],
    ['bands', 'hysteresis'],
    ['totalRefusal', 'enabled'],
    ['totalRefusal', 'consecutiveTicks'],
    ['canary', 'minMismatches'],
    ['health'],
  ] as const;
  const config = fc.oneof(
    {
      weight: 8,
      arbitrary: fc
        .array(changeOf(SCORING_PATHS, fc.oneof(plausibleNumber, fc.boolean())), { maxLength: 3 })
        .map((c) => changed({}, c)),
    },
    { weight: 1, arbitrary: anyValue },
  );

  test(
    `parseScoringConfig: finite settings, or a ScoringConfigError of one bounded line naming the fields ` +
      `(${FUZZ_RUNS} cases)`,
    () => {
      let accepted = 0;
      fc.assert(
        fc.property(config, (raw) => {
          let parsed: unknown;
          const err = thrownBy(() => (parsed = parseScoringConfig(raw)));
          if (err === undefined) {
            accepted += 1;
            expect(numbers(parsed).filter((n) => !Number.isFinite(n))).toEqual([]);
            return;
          }
          if (!(err instanceof ScoringConfigError))
            throw new Error(`threw ${describeThrown(err)}, not a ScoringConfigError`);
          expect(
            messageProblems(
              err.message,
              new RegExp(`^invalid scoring config: (?:${PATH}: \\S|unknown fields? "|${WHOLE})`),
              MAX_MESSAGE_CHARS + 'invalid scoring config: '.length,
            ),
          ).toEqual([]);
        }),
        fuzzParameters(),
      );
      expect(accepted).toBeGreaterThan(FUZZ_RUNS / 10);
    },
  );
});

describe('classifier configuration', () => {
  const marker = fc.record(
    {
      id: fc.oneof(fc.constantFrom('shop-captcha', 'cf-challenge', 'Bad Id', ''), nastyShortString),
      vendor: fc.oneof(fc.constantFrom('Shop', ''), nastyShortString),
      kind: fc.constantFrom('challenge', 'block', 'other'),
      evidence: fc.constantFrom('strong', 'weak', 'none'),
      bodyAny: fc.oneof(fc.constant(['verify you are human']), fc.array(nastyShortString, { maxLength: 3 })),
      bodyRegex: fc.oneof(fc.constantFrom('captcha', '(a+)+$', '[', '(?<=x)y', 'x'.repeat(301)), nastyShortString),
      headers: fc.oneof(
        fc.constant([{ name: 'cf-mitigated', contains: 'challenge' }]),
        fc.array(
          fc.record(
            { name: nastyShortString, contains: nastyShortString, regex: nastyShortString },
            { requiredKeys: [] },
          ),
          { maxLength: 2 },
        ),
      ),
    },
    { requiredKeys: ['id', 'kind'] },
  );
  const CLASSIFIER_PATHS = [
    ['extraMarkers'],
    ['disabledMarkers'],
    ['statusOverrides'],
    ['sizeRatio'],
    ['minSizeSamples'],
    ['minUsualRecordsRate'],
    ['minRecordsSamples'],
    ['shortPageBytes'],
  ] as const;
  const plausible = fc.oneof(
    plausibleNumber,
    fc.array(marker, { maxLength: 3 }),
    fc.array(fc.oneof(fc.constantFrom('cloudflare-challenge', 'recaptcha', 'unknown-id'), nastyShortString), {
      maxLength: 3,
    }),
    fc.dictionary(
      fc.oneof(fc.constantFrom('404', '429', '999', '__proto__'), nastyShortString),
      fc.oneof(fc.constantFrom('soft_block', 'hard_block', 'ok', 'x'), nastyShortString),
      { maxKeys: 3 },
    ),
  );
  const config = fc.oneof(
    {
      weight: 8,
      arbitrary: fc.array(changeOf(CLASSIFIER_PATHS, plausible), { maxLength: 3 }).map((c) => changed({}, c)),
    },
    { weight: 1, arbitrary: anyValue },
  );

  test(
    'parseSiteClassifierConfig: a config, ' + `or one bounded line per problem naming the field (${FUZZ_RUNS} cases)`,
    () => {
      let accepted = 0;
      fc.assert(
        fc.property(config, (raw) => {
          const result = parseSiteClassifierConfig(raw);
          if (result.ok) {
            accepted += 1;
            expect(numbers(result.config).filter((n) => !Number.isFinite(n))).toEqual([]);
            return;
          }
          expect(result.errors.length).toBeGreaterThan(0);
          for (const line of result.errors) expect(messageProblems(line, FIELD_LINE, MAX_LINE_CHARS)).toEqual([]);
        }),
        fuzzParameters(),
      );
      expect(accepted).toBeGreaterThan(FUZZ_RUNS / 10);
    },
  );
});

describe('the environment', () => {
  const SECRET = 'S3cr3t-pw_x';
  const VALUES: Record<string, readonly string[]> = {
    TEMPORAL_ADDRESS: [
      'localhost:7233',
      '127.0.0.1:7233',
      'my-ns.tmprl.cloud:7233',
      'localhost',
      'http://localhost:7233',
      ':7233',
    ],
    TEMPORAL_NAMESPACE: ['default', 'my ns', ''],
    TEMPORAL_TASK_QUEUE: ['target-health', ''],
    TEMPORAL_TLS: ['true', 'false', 'yes', 'TRUE', ''],
    TEMPORAL_TLS_CERT_PATH: ['/nonexistent/cert.pem', ''],
    TEMPORAL_TLS_KEY_PATH: ['/nonexistent/key.pem', ''],
    TEMPORAL_TLS_CA_PATH: ['/nonexistent/ca.pem', ''],
    TEMPORAL_TLS_SERVER_NAME: ['temporal.example', ''],
    TEMPORAL_API_KEY: [SECRET, ''],
    DATABASE_URL: [
      `postgres://app:${SECRET}@db:5432/x`,
      `postgres://app:${SECRET}@/x`,
      `postgresql://app:${SECRET}@db:99999/x`,
      `postgres://app:${SECRET}/x@db/x`,
      `postgres://app:${SECRET}#x@db/x`,
      `mysql://app:${SECRET}@db/x`,
      `host=db password=${SECRET}`,
      `postgres://db/x?password=${SECRET}`,
      `postgres://app:${encodeURIComponent(`${SECRET}@:/`)}@db/x`,
      SECRET,
      '',
    ],
    LOG_LEVEL: ['info', 'INFO', 'verbose', ''],
    TARGET_HEALTH_DATA_DIR: ['data', ''],
    TEMPORAL_PORT: ['7233', '0', '65536', '7233.5', 'x', ''],
    TEMPORAL_UI_PORT: ['8233', '-1'],
    TARGET_HEALTH_PG_PORT: ['54329', '1e3'],
    TEMPORAL_UI_URL: ['http://127.0.0.1:8233', 'ftp://x', 'not a url', '', `http://admin:${SECRET}@ui.example:8233`],
    TARGET_HEALTH_WEBHOOK_URL: [
      `https://hooks.example.com/${SECRET}`,
      `ftp://hooks.example.com/${SECRET}`,
      `hooks.example.com/${SECRET}`,
      `https://u:${SECRET}@hooks.example.com/x`,
      '',
    ],
    TARGET_HEALTH_SLACK_WEBHOOK_URL: [`https://hooks.slack.com/services/${SECRET}`, `https:///services/${SECRET}`],
    TARGET_HEALTH_ROUTES: [
      JSON.stringify({ 'residential-de': `http://user:${SECRET}@gw.proxy.example:8000` }),
      JSON.stringify({ 'residential-de': `http://user:${SECRET}@gw.proxy.example` }),
      JSON.stringify({ 'residential-de': `socks5://user:${SECRET}@gw.proxy.example:1080` }),
      JSON.stringify({ 'residential-de': `http://user:${SECRET}/x@gw.proxy.example:8000` }),
      JSON.stringify({ 'bad label': `http://user:${SECRET}@gw.proxy.example:8000` }),
      `{"residential-de": "http://user:${SECRET}@gw`,
      '[]',
    ],
    TARGET_HEALTH_CANARY_ALLOWED_TARGETS: ['10.0.0.0/8, intranet.example', 'not a host!', '::1/200'],
    TARGET_HEALTH_CANARY_USER_AGENT: ['fleet/1.0', ''],
    TARGET_HEALTH_CANARY_TIMEOUT_MS: ['20000', '99', 'x'],
    TARGET_HEALTH_CANARY_MAX_BYTES: ['2097152', '1e12'],
    TARGET_HEALTH_CANARY_CONCURRENCY: ['4', '65'],
  };
  const VARIABLES = Object.keys(VALUES);
  const envMap: fc.Arbitrary<Record<string, string | undefined>> = fc
    .array(
      fc.tuple(
        fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...VARIABLES) }, { weight: 1, arbitrary: hostileKey }),
        fc.nat(),
      ),
      { maxLength: 6 },
    )
    .chain((picks) =>
      fc
        .tuple(
          ...picks.map(([name]) =>
            fc.oneof(
              { weight: 4, arbitrary: fc.constantFrom(...(Object.hasOwn(VALUES, name) ? VALUES[name]! : [''])) },
              { weight: 2, arbitrary: nastyString },
              { weight: 1, arbitrary: plausibleNumber.map(String) },
            ),
          ),
        )
        .map(
          (values) =>
            objectOf(picks.map(([name], i) => [name, values[i]] as const)) as Record<string, string | undefined>,
        ),
    );

  const LOADERS: Record<string, (env: Record<string, string | undefined>) => unknown> = {
    loadTemporalSettings,
    loadDatabaseUrl,
    loadOptionalDatabaseUrl,
    loadLogLevel,
    loadLocalStackSettings,
    loadTemporalUiUrl,
    loadNotifierSettings,
    loadCanarySettings,
  };
  const VARIABLE_LINE = /^(?:[A-Z][A-Z0-9_]*|environment): \S/;

  test(
    `every loader: settings, or a UserError of one bounded line naming the variable, never showing a secret ` +
      `(${FUZZ_RUNS} cases)`,
    () => {
      let refused = 0;
      fc.assert(
        fc.property(envMap, (env) => {
          for (const [name, load] of Object.entries(LOADERS)) {
            const err = thrownBy(() => load(env));
            if (err === undefined) continue;
            refused += 1;
            if (!(err instanceof UserError)) throw new Error(`${name} threw ${describeThrown(err)}, not a UserError`);
            expect(err.exitCode).toBe(2);
            const problems = messageProblems(err.message, VARIABLE_LINE, 2 * MAX_MESSAGE_CHARS);
            if (err.message.includes(SECRET) || err.message.includes(encodeURIComponent(SECRET)))
              problems.push(`shows a secret: ${err.message.slice(0, 300)}`);
            expect({ loader: name, problems }).toEqual({ loader: name, problems: [] });
          }
        }),
        fuzzParameters(),
      );
      expect(refused).toBeGreaterThan(FUZZ_RUNS / 10);
    },
  );
});
