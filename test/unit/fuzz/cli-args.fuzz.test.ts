/**
 * Fuzzing the CLI's argument parsers: durations (`--tick`, `--timeout`), the `<site>`
 * argument, the flags of `decide` and of `canary add`, each with arbitrary strings — hostile text,
 * megabyte values, numbers in every spelling — as commander hands them over.
 *
 * Properties: nothing but a UserError (exit code 2) is ever thrown; its message is one line, bounded,
 * well formed and starts with the flag or argument it is about; what is accepted is usable (a duration
 * a timer can wait, a site key, a decision the workflow accepts, a canary definition). Passwords of
 * proxy URLs given as flags never appear in a refusal. Real invocations of the built CLI with fuzzed
 * arguments are in cli-invocations.fuzz.test.ts.
 */
import fc from 'fast-check';
import { asFlags, decisionPayload } from '../../../client/commands/decide';
import { startSettings } from '../../../client/commands/start';
import { type CanaryFlags, definitionFromFlags } from '../../../client/commands/canary-flags';
import { parseDuration } from '../../../client/durations';
import { siteArgument } from '../../../client/site-arg';
import {
  CANARY_NAME,
  type CanaryDefinition,
  INTERVAL_LIMITS,
  parseCanaryDefinition,
} from '../../../core/canaries/definition';
import { definitionOptions } from '../../../server/canary-runner/define';
import { loadCanarySettings } from '../../../server/canary-runner/settings';
import { UserError } from '../../../core/common/user-error';
import { isWellFormed } from '@target-health/crawler/events/well-formed';
import { DECISION_KINDS, type DecisionKind, parseDecision } from '../../../core/control/decisions';
import {
  FUZZ_RUNS,
  fuzzParameters,
  describeThrown,
  edgeNumber,
  messageProblems,
  nastyShortString,
  nastyString,
  thrownBy,
} from '../../kit/hostile-fuzz';

/**
 * Longest refusal of one flag: the flag, what is wrong, capped echoes of the value and the fix. An echo
 * is cut at 60-80 characters of input, but escaped (`\u0000` for a NUL) it may be six times longer.
 */
const MAX_FLAG_MESSAGE = 1_200;
/** The longest wait a Node timer (and PostgreSQL's statement_timeout) takes: 2^31 - 1 ms, about 24.8 days. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Numbers as people type them, and as they should not. */
const numberText: fc.Arbitrary<string> = fc.oneof(
  edgeNumber.map(String),
  fc.integer({ min: -10, max: 20_000 }).map(String),
  fc.constantFrom(
    '',
    ' ',
    '0x10',
    '1e3',
    '1e400',
    '0b1',
    '.5',
    '5.',
    '+3',
    '-0',
    '٣',
    '３',
    '1_000',
    '1,5',
    'NaN',
    'Infinity',
    ' 4 ',
    '4\n',
  ),
);

/** Durations as people type them (units, spaces, signs, decimals, exponents) and hostile text. */
const durationText: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .tuple(
        numberText,
        fc.constantFrom('', ' ', '  '),
        fc.constantFrom('', 'ms', 's', 'm', 'h', 'd', 'w', 'y', 'S', 'sec', 'seconds', 'minutes', 'days', 'years', 'x'),
      )
      .map(([n, sp, u]) => `${n}${sp}${u}`),
  },
  { weight: 2, arbitrary: nastyString },
);

const siteText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    'shop.example.com',
    'https://user:pw@Shop.Example.COM:8443/p/1?x',
    'bücher.example',
    '127.0.0.1',
    '[::1]',
    'localhost',
    'a..b',
    'ｓｈｏｐ．example.com',
    'xn--.com',
    '1.2.3.256',
    `${'a'.repeat(64)}.com`,
    '-a.com',
  ),
  fc
    .tuple(nastyShortString, fc.constantFrom('', '.example.com', '.com'), nastyShortString)
    .map(([a, b, c]) => `${a}${b}${c}`),
  nastyString,
);

/** What the property allows a parser to throw: a UserError with exit code 2, and nothing else. */
function refusal(err: unknown): string {
  if (!(err instanceof UserError)) throw new Error(`threw ${describeThrown(err)}, not a UserError`);
  expect(err.exitCode).toBe(2);
  return err.message;
}

describe('durations (--tick, --timeout)', () => {
  test(`parseDuration: a positive duration a timer can wait, or one line naming the flag (${FUZZ_RUNS} cases)`, () => {
    fc.assert(
      fc.property(fc.constantFrom('--tick', '--timeout'), durationText, (flag, text) => {
        let ms: number | undefined;
        const err = thrownBy(() => (ms = parseDuration(flag, text)));
        if (err === undefined) {
          expect(Number.isFinite(ms) && ms! > 0 && ms! <= MAX_TIMER_MS).toBe(true);
        } else {
          expect(messageProblems(refusal(err), new RegExp(`^${flag}: \\S`), MAX_FLAG_MESSAGE)).toEqual([]);
        }
      }),
      fuzzParameters(),
    );
  });
});

describe('start <site> --tick', () => {
  test(`startSettings: the loop's input, or one line naming the argument or the flag (${FUZZ_RUNS} cases)`, () => {
    fc.assert(
      fc.property(siteText, durationText, (raw, tick) => {
        let settings: ReturnType<typeof startSettings> | undefined;
        const err = thrownBy(() => (settings = startSettings(raw, { tick })));
        if (err === undefined) expect(settings!.checked.tickIntervalMs).toBe(parseDuration('--tick', tick));
        else expect(messageProblems(refusal(err), /^(?:site|--tick): \S/, MAX_FLAG_MESSAGE)).toEqual([]);
      }),
      fuzzParameters(),
    );
  });
});

describe('<site>', () => {
  test(`siteArgument: a normalised host, or one line naming the argument (${FUZZ_RUNS} cases)`, () => {
    fc.assert(
      fc.property(siteText, (raw) => {
        let site: string | undefined;
        const err = thrownBy(() => (site = siteArgument(raw)));
        if (err === undefined) expect(site).toMatch(/^(?=.{1,253}$)[a-z0-9-]+(\.[a-z0-9-]+)+$/);
        else expect(messageProblems(refusal(err), /^site: \S/, MAX_FLAG_MESSAGE)).toEqual([]);
      }),
      fuzzParameters(),
    );
  });
});

describe('decide flags', () => {
  const text = fc.oneof(
    {
      weight: 3,
      arbitrary: fc.constantFrom('alice@example.com', 'checked the terms', 'cautious', 'explicit', '4', '2.5', ''),
    },
    { weight: 3, arbitrary: nastyString },
    { weight: 2, arbitrary: numberText },
  );
  const flags = fc.record({ who: text, why: text, mode: text, concurrency: text, revisit: text }, { requiredKeys: [] });

  /** What `target-health decide` checks before it contacts Temporal (client/commands/decide.ts). */
  function checkDecide(kind: DecisionKind, o: Parameters<typeof decisionPayload>[1]): ReturnType<typeof parseDecision> {
    const checked = parseDecision(kind, decisionPayload(kind, o));
    if (!checked.ok) throw new UserError(asFlags(checked.message));
    return checked;
  }

  test(`a decision the workflow accepts, or one line naming the flag (${FUZZ_RUNS} cases)`, () => {
    let accepted = 0;
    fc.assert(
      fc.property(fc.constantFrom(...DECISION_KINDS), flags, (kind, o) => {
        let checked: ReturnType<typeof parseDecision> | undefined;
        const err = thrownBy(() => (checked = checkDecide(kind, o)));
        if (err === undefined) {
          accepted += 1;
          // Sent as the workflow will decode it: the same decision.
          expect(parseDecision(kind, JSON.parse(JSON.stringify(decisionPayload(kind, o))))).toEqual(checked);
        } else {
          const names = new RegExp(
            `^(?:--(?:concurrency|revisit): |${kind}: --(?:who|why|mode|concurrency|revisit): )\\S`,
          );
          expect(messageProblems(refusal(err), names, MAX_FLAG_MESSAGE)).toEqual([]);
        }
      }),
      fuzzParameters(),
    );
    expect(accepted).toBeGreaterThan(FUZZ_RUNS / 50);
  });
});

describe('canary add flags', () => {
  const settings = loadCanarySettings({});
  const site = 'shop.example.com';
  const PASSWORD = 'Pw-s3cr3t/x:y';

  const value = (plausible: readonly string[]) =>
    fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...plausible) },
      { weight: 2, arbitrary: nastyString },
      { weight: 1, arbitrary: numberText },
    );
  /** Values for each flag: plausible ones (valid or typical mistakes), hostile text, numbers. */
  const flagValues: { [K in keyof CanaryFlags]-?: fc.Arbitrary<NonNullable<CanaryFlags[K]>> } = {
    name: value(['price', 'Price', 'a'.repeat(65), '-x', 'p.1']),
    url: value([
      'https://shop.example.com/p/1',
      'http://shop.example.com',
      'https://10.0.0.1/',
      'http://169.254.169.254/latest',
      'ftp://shop.example.com/',
      'shop.example.com/p',
      'https://',
      `https://shop.example.com/${'p'.repeat(9_000)}`,
      `https://${'x'.repeat(70_000)}`,
    ]),
    proxy: value([
      `http://user:${PASSWORD}@proxy.example:8000`,
      `http://user:${PASSWORD}@proxy.example`,
      `socks5://u:${PASSWORD}@h:1080`,
      'http://proxy.example:8000/path',
      `http://u:${PASSWORD}@:80`,
      `http://u:${PASSWORD}@proxy.example:8000/x`,
    ]),
    route: value(['residential-de', 'unknown', 'a b']),
    interval: durationText,
    timeout: durationText,
    pageType: value(['product', 'a/b:c', 'bad type']),
    expectStatus: value(['200', '200,203', '99', '2000', '200,,203', ' 200 ']),
    expectText: value(['.price', 'span[itemprop=price]', '[', '::before', 'a:has(', '<b>', '#', '*']),
    attr: value(['content', '1bad', 'data-x']),
    expectJson: value(['/items/0/price', '', 'items', '/a~2', '/a~1b']),
    equals: value(['$139.95', '139.95', '{"a":1}', '[1', 'null']),
    matches: value(['^\\$\\d+', '(a+)+$', '(?=x)', '[', '\\1', '(?<n>x)\\k<n>']),
    between: value(['100..200', '200..100', '1,2', '-1.5..2', '1..', 'a..b']),
    expectCount: value(['li.item', 'li[', 'div']),
    count: value(['3', '-1', '1.5', '']),
    atLeast: value(['1', 'x']),
    expectAbsent: fc.array(value(['Access denied', '']), { maxLength: 3 }),
  };
  const FLAG_KEYS = Object.keys(flagValues) as Array<keyof CanaryFlags>;
  /** A valid canary's flags with up to three flags set to fuzzed values, or (now and then) any flags at all. */
  const canaryFlags: fc.Arbitrary<CanaryFlags> = fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .array(
          fc.constantFrom(...FLAG_KEYS).chain((key) => flagValues[key].map((v) => [key, v] as const)),
          { maxLength: 3 },
        )
        .map((changes) => ({
          url: 'https://shop.example.com/p/1',
          expectText: '.price',
          equals: '$139.95',
          ...Object.fromEntries(changes),
        })),
    },
    { weight: 1, arbitrary: fc.record(flagValues, { requiredKeys: [] }) },
  );

  /** The refusals `canary add <site> <flags>` prints (client/commands/canary.ts), or the definition. */
  function check(flags: CanaryFlags): { lines: string[]; definition?: CanaryDefinition } {
    const built = definitionFromFlags(flags);
    if (!built.ok) return { lines: built.errors };
    if (built.json.url === undefined) return { lines: [] };
    const parsed = parseCanaryDefinition(built.json, definitionOptions(settings, site));
    return parsed.ok ? { lines: [], definition: parsed.definition } : { lines: parsed.errors.map(built.flagOf) };
  }

  const FLAG_LINE = /^--[a-z-]+(?:(?:, | or )--[a-z-]+)*: \S/;

  test(
    `a storable definition, or refusal lines that each name a flag, are one bounded line and show no proxy ` +
      `password (${FUZZ_RUNS} cases)`,
    () => {
      let refused = 0;
      let accepted = 0;
      fc.assert(
        fc.property(canaryFlags, (flags) => {
          let result: ReturnType<typeof check> = { lines: [] };
          const err = thrownBy(() => (result = check(flags)));
          if (err !== undefined) throw new Error(`threw ${describeThrown(err)}`);
          if (result.lines.length > 0) refused += 1;
          for (const line of result.lines) {
            expect(messageProblems(line, FLAG_LINE, MAX_FLAG_MESSAGE)).toEqual([]);
            expect(line).not.toContain(PASSWORD);
            expect(line).not.toContain(encodeURIComponent(PASSWORD));
          }
          const d = result.definition;
          if (d !== undefined) {
            accepted += 1;
            const texts = [
              d.name,
              d.url,
              d.route,
              d.pageType,
              ...d.expect.flatMap((e) => Object.values(e).filter((v): v is string => typeof v === 'string')),
            ];
            for (const text of texts) if (text !== undefined) expect(isWellFormed(text)).toBe(true);
            expect(d.name).toMatch(CANARY_NAME);
            expect(d.intervalMs).toBeGreaterThanOrEqual(INTERVAL_LIMITS.minMs);
            expect(d.intervalMs).toBeLessThanOrEqual(INTERVAL_LIMITS.maxMs);
          }
        }),
        fuzzParameters(),
      );
      // Both sides are exercised: many refusals, and a fair share accepted.
      expect(refused).toBeGreaterThan(FUZZ_RUNS / 4);
      expect(accepted).toBeGreaterThan(FUZZ_RUNS / 10);
    },
  );
});
