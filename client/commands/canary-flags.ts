/**
 * `target-health canary add <site> --url … --expect-text .price --equals '$139.95'`: the common one-page
 * case without writing a file. The flags are turned into the same JSON a file would hold and validated
 * by the same parser; errors then name the flag the person typed, not the JSON field it became.
 */
import type { JsonValue } from '../../core/canaries/json-pointer';
import { describeValue } from '@target-health/crawler/events/zod-issues';

export interface CanaryFlags {
  name?: string;
  url?: string;
  proxy?: string;
  route?: string;
  interval?: string;
  timeout?: string;
  pageType?: string;
  expectStatus?: string;
  expectText?: string;
  attr?: string;
  expectJson?: string;
  equals?: string;
  matches?: string;
  between?: string;
  expectCount?: string;
  count?: string;
  atLeast?: string;
  expectAbsent?: string[];
}

/** Flags that describe the definition (so `--file` together with any of them is refused). */
export const DEFINITION_FLAGS: ReadonlyArray<[keyof CanaryFlags, string]> = [
  ['name', '--name'],
  ['url', '--url'],
  ['proxy', '--proxy'],
  ['route', '--route'],
  ['interval', '--interval'],
  ['timeout', '--timeout'],
  ['pageType', '--page-type'],
  ['expectStatus', '--expect-status'],
  ['expectText', '--expect-text'],
  ['attr', '--attr'],
  ['expectJson', '--expect-json'],
  ['equals', '--equals'],
  ['matches', '--matches'],
  ['between', '--between'],
  ['expectCount', '--expect-count'],
  ['count', '--count'],
  ['atLeast', '--at-least'],
  ['expectAbsent', '--expect-absent'],
];

export function usedDefinitionFlags(flags: CanaryFlags): string[] {
  return DEFINITION_FLAGS.filter(([key]) => {
    const value = flags[key];
    return Array.isArray(value) ? value.length > 0 : value !== undefined;
  }).map(([, flag]) => flag);
}

export type FlagsResult =
  | { ok: true; json: Record<string, JsonValue>; flagOf: (errorLine: string) => string }
  | { ok: false; errors: string[] };

const TOP_LEVEL: Readonly<Record<string, string>> = {
  name: '--name',
  url: '--url',
  proxy: '--proxy',
  route: '--route',
  interval: '--interval',
  timeout: '--timeout',
  pageType: '--page-type',
  expect: '--expect-text, --expect-json, --expect-count, --expect-absent or --expect-status',
};
const FIELD_FLAGS: Readonly<Record<string, string>> = {
  equals: '--equals',
  matches: '--matches',
  between: '--between',
  count: '--count',
  atLeast: '--at-least',
  attr: '--attr',
};

/** Builds the definition JSON from flags; `flagOf` rewrites a parser error line to name the flag. */
export function definitionFromFlags(flags: CanaryFlags): FlagsResult {
  const errors: string[] = [];
  const json: Record<string, JsonValue> = {};
  const expect: JsonValue[] = [];
  const entryFlags: string[] = [];
  for (const key of ['name', 'url', 'proxy', 'route', 'interval', 'timeout', 'pageType'] as const) {
    const value = flags[key];
    if (value !== undefined) json[key] = value;
  }

  if (flags.expectStatus !== undefined) {
    const codes = flags.expectStatus.split(',').map((s) => s.trim());
    if (codes.some((c) => !/^\d{3}$/.test(c)))
      errors.push(
        `--expect-status: ${describeValue(flags.expectStatus)} must be a status code like 200, or codes like 200,203`,
      );
    else {
      expect.push({ status: codes.length === 1 ? Number(codes[0]) : codes.map(Number) });
      entryFlags.push('--expect-status');
    }
  }

  const valueFlags = (['equals', 'matches', 'between'] as const).filter((k) => flags[k] !== undefined);
  if (flags.expectText !== undefined && flags.expectJson !== undefined && valueFlags.length > 0) {
    errors.push(
      `--${valueFlags[0]}: applies to one of --expect-text or --expect-json, and both are given; use --file ` +
        `for several value checks`,
    );
  }
  if (valueFlags.length > 1)
    errors.push(
      `--${valueFlags[1]}: give one of --equals, --matches, --between per canary added with flags; use --file for more`,
    );
  const assertion = (target: 'text' | 'json'): Record<string, JsonValue> | undefined => {
    if (flags.equals !== undefined) return { equals: target === 'json' ? jsonOrString(flags.equals) : flags.equals };
    if (flags.matches !== undefined) return { matches: flags.matches };
    if (flags.between !== undefined) {
      const range = parseRange(flags.between);
      if (range === undefined) {
        errors.push(`--between: ${describeValue(flags.between)} must be a range like 100..200`);
        return undefined;
      }
      return { between: range };
    }
    errors.push(`--expect-${target}: say what to check with --equals, --matches or --between`);
    return undefined;
  };
  if (flags.expectText !== undefined) {
    const a = assertion('text');
    if (a) {
      expect.push({ css: flags.expectText, ...(flags.attr !== undefined ? { attr: flags.attr } : {}), ...a });
      entryFlags.push('--expect-text');
    }
  } else if (flags.attr !== undefined) {
    errors.push('--attr: only goes with --expect-text (read an attribute instead of the text)');
  }
  if (flags.expectJson !== undefined) {
    const a = assertion('json');
    if (a) {
      expect.push({ json: flags.expectJson, ...a });
      entryFlags.push('--expect-json');
    }
  }
  if (flags.expectText === undefined && flags.expectJson === undefined && valueFlags.length > 0) {
    errors.push(
      `--${valueFlags[0]}: needs --expect-text <css selector> or --expect-json <pointer> to say what it checks`,
    );
  }

  if (flags.expectCount !== undefined) {
    if ((flags.count === undefined) === (flags.atLeast === undefined)) {
      errors.push('--expect-count: give exactly one of --count <n> or --at-least <n>');
    } else {
      const raw = (flags.count ?? flags.atLeast)!;
      const flag = flags.count !== undefined ? '--count' : '--at-least';
      if (!/^\d+$/.test(raw)) errors.push(`${flag}: ${describeValue(raw)} must be a whole number ≥ 0`);
      else {
        expect.push({ css: flags.expectCount, [flags.count !== undefined ? 'count' : 'atLeast']: Number(raw) });
        entryFlags.push('--expect-count');
      }
    }
  } else if (flags.count !== undefined || flags.atLeast !== undefined) {
    errors.push(
      `${flags.count !== undefined ? '--count' : '--at-least'}: needs --expect-count <css selector> to say ` +
        `what it counts`,
    );
  }

  for (const text of flags.expectAbsent ?? []) {
    expect.push({ absent: text });
    entryFlags.push('--expect-absent');
  }
  if (expect.length === 0 && errors.length === 0) {
    errors.push(
      '--expect-text: a canary needs at least one check: --expect-text <css> with ' +
        '--equals/--matches/--between, --expect-json, --expect-count, --expect-absent or --expect-status',
    );
  }
  json.expect = expect;
  if (errors.length > 0) return { ok: false, errors };

  const flagOf = (line: string): string => {
    const m = /^expect\[(\d+)\](?:\.([A-Za-z]+))?(?:\[\d+\])?: (.*)$/.exec(line);
    if (m) {
      const [, index = '', field, message = ''] = m;
      const entryFlag = entryFlags[Number(index)] ?? 'expect';
      const flag = field !== undefined && FIELD_FLAGS[field] !== undefined ? FIELD_FLAGS[field] : entryFlag;
      return `${flag}: ${message}`;
    }
    const top = /^([A-Za-z]+): (.*)$/.exec(line);
    if (top && TOP_LEVEL[top[1]!] !== undefined) return `${TOP_LEVEL[top[1]!]}: ${top[2]}`;
    return line;
  };
  return { ok: true, json, flagOf };
}

function jsonOrString(value: string): JsonValue {
  try {
    return JSON.parse(value) as JsonValue;
  } catch {
    return value;
  }
}

function parseRange(text: string): [number, number] | undefined {
  const m = /^\s*(-?\d+(?:\.\d+)?)\s*(?:\.\.|,)\s*(-?\d+(?:\.\d+)?)\s*$/.exec(text);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}
