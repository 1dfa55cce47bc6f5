/**
 * The event boundary: what PostgreSQL cannot store is refused with a message naming the
 * field, classification-only text is cut on code points and made well-formed, header names are kept
 * as given (prototype keys included), host names are normalised the way IDNA does, length checks come
 * before Punycode, and the store's time horizon is enforced with a clear message.
 */
import { parseBatch } from '../../../server/db/signal-store/ingest';
import {
  BODY_SAMPLE_CHARS,
  MAX_BYTES,
  MAX_INT32,
  normaliseSite,
  parseEvent,
  tryNormaliseSite,
} from '@target-health/crawler/events';
import { fastParseEvent } from '@target-health/crawler/events/fast-parse';
import { EVENT_HORIZON } from '../../../core/signals/horizon';
import { isWellFormed as isStorableText } from '@target-health/crawler/events/well-formed';
import { SAMPLE_GAP } from '@target-health/crawler/events/text';
import { joinRegExp } from '../../kit/regexp';

const NOW = Date.UTC(2026, 10, 30, 12, 0, 0);
const base = { ts: NOW, site: 'shop.example.com', status: 200, latencyMs: 10 };

function errorsOf(input: unknown): string[] {
  const result = parseEvent(input);
  if (result.ok) throw new Error(`expected errors, got ${JSON.stringify(result.event)}`);
  // The fast path must never take what the schema refuses.
  expect(fastParseEvent(input)).toBeUndefined();
  return result.errors;
}

function eventOf(input: unknown) {
  const result = parseEvent(input);
  if (!result.ok) throw new Error(result.errors.join('\n'));
  const fast = fastParseEvent(input);
  if (fast !== undefined) expect(fast).toEqual(result.event);
  return result.event;
}

describe('numbers fit their columns', () => {
  it.each([
    [
      'retries',
      { retries: MAX_INT32 + 1 },
      `retries: must be the number of retries before this outcome, at most 2,147,483,647 (got 2147483648)`,
    ],
    [
      'validRecords',
      { extraction: { result: 'ok', validRecords: 2 ** 53 - 1 } },
      'extraction.validRecords: must be the number of valid records extracted, at most 2,147,483,647',
    ],
    [
      'bytes',
      { bytes: 2 ** 53 - 1 },
      'bytes: must be the response body size in bytes, at most 1,000,000,000,000 (got 9007199254740991)',
    ],
  ])('%s beyond the column is refused by name', (_name, patch, message) => {
    expect(errorsOf({ ...base, ...patch }).some((e) => e.startsWith(message))).toBe(true);
  });

  it('an integer past 2^53 − 1: one error per field naming the bound, no rounded echo', () => {
    // JSON.parse rounds 9007199254740993 to …992: the message must not show a value never sent.
    const input = JSON.parse(
      `{"ts":${NOW},"site":"shop.example.com","status":200,"latencyMs":10,"credits":9007199254740993,"bytes":90` +
        `07199254740993}`,
    ) as unknown;
    const errors = errorsOf(input);
    const beyond = '(got a number beyond 2^53 − 1, which JSON numbers do not hold exactly)';
    expect(errors.sort()).toEqual([
      `bytes: must be the response body size in bytes, at most 1,000,000,000,000 ${beyond}`,
      `credits: must be a number of credits of at most 9,007,199,254,740,991 (2^53 − 1) ${beyond}`,
    ]);
    expect(eventOf({ ...base, credits: Number.MAX_SAFE_INTEGER }).credits).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('the largest values that fit are accepted, by both parsers alike', () => {
    const e = eventOf({
      ...base,
      retries: MAX_INT32,
      bytes: MAX_BYTES,
      extraction: { result: 'ok', validRecords: MAX_INT32 },
    });
    expect([e.retries, e.bytes, e.extraction?.validRecords]).toEqual([MAX_INT32, MAX_BYTES, MAX_INT32]);
  });
});

describe('stored text is storable', () => {
  it.each([
    ['a lone high surrogate', 'price\ud83d', 'a lone UTF-16 surrogate'],
    ['a lone low surrogate', '\ude00', 'a lone UTF-16 surrogate'],
    ['NUL', 'a\u0000b', 'the NUL character'],
  ])('missingFields with %s is refused, naming the element', (_name, field, detail) => {
    const errors = errorsOf({ ...base, extraction: { result: 'missing_fields', missingFields: ['title', field] } });
    expect(errors).toEqual([
      expect.stringMatching(
        new RegExp(
          `^extraction\\.missingFields\\[1\\]: must be a field name without ${detail.replace(/[()]/g, '\\$&')}`,
        ),
      ),
    ]);
  });

  it('outcomeReason (part of the stored reason) refuses them too; a whole emoji is fine', () => {
    expect(errorsOf({ ...base, outcome: 'challenge', outcomeReason: 'captcha \ud83d' })[0]).toMatch(
      /^outcomeReason: must be a text without a lone UTF-16 surrogate/,
    );
    expect(
      eventOf({
        ...base,
        outcome: 'challenge',
        outcomeReason: 'captcha 😀',
        extraction: { result: 'missing_fields', missingFields: ['😀', '"q\\'] },
      }).outcomeReason,
    ).toBe('captcha 😀');
  });
});

describe('classification-only text', () => {
  it('bodySample is cut on code-point boundaries: an emoji straddling either cut goes whole', () => {
    const half = Math.floor((BODY_SAMPLE_CHARS - SAMPLE_GAP.length) / 2);
    // The head's cut falls inside the first emoji, the tail's inside the second.
    const body = `${'x'.repeat(half - 1)}😀${'m'.repeat(BODY_SAMPLE_CHARS)}😀${'y'.repeat(half - 1)}`;
    const e = eventOf({ ...base, bodySample: body });
    expect(e.bodySample).toBe(`${'x'.repeat(half - 1)}${SAMPLE_GAP}${'y'.repeat(half - 1)}`);
    expect(isStorableText(e.bodySample!)).toBe(true);
  });

  it('lone surrogates and NUL in body, title and header values become U+FFFD instead of losing the event', () => {
    const e = eventOf({
      ...base,
      bodySample: '<p>\ud83d</p>\u0000',
      title: ' a\udc00 ',
      headers: { Server: 'x\ud800' },
    });
    expect([e.bodySample, e.title, e.headers?.server]).toEqual(['<p>\ufffd</p>\ufffd', 'a\ufffd', 'x\ufffd']);
  });
});

describe('headers keep every name as given', () => {
  it('constructor, __proto__ and toString are ordinary header names', () => {
    const input = JSON.parse(
      `{"ts":${NOW},"site":"shop.example.com","status":200,"latencyMs":1,"headers":{"constructor":"a","__proto_` +
        `_":"b","toString":["c","d"],"Server":"cloudflare"}}`,
    ) as unknown;
    const e = eventOf(input);
    expect(Object.keys(e.headers!)).toEqual(['constructor', '__proto__', 'tostring', 'server']);
    expect(e.headers!.constructor).toBe('a');
    expect(Object.getOwnPropertyDescriptor(e.headers, '__proto__')?.value).toBe('b');
    expect(e.headers!.tostring).toBe('c\nd');
    expect(JSON.stringify(e.headers)).toBe(
      '{"constructor":"a","__proto__":"b","tostring":"c\\nd","server":"cloudflare"}',
    );
  });

  it('bad names and values are refused by header name', () => {
    expect(errorsOf({ ...base, headers: { 'x y': 'v', ok: 1, list: ['a', 2] } })).toEqual([
      'headers."x y": is not a header name: use 1-256 visible ASCII characters without spaces',
      'headers.ok: must be a header value (a string or a list of strings) (got 1)',
      'headers.list: must be a header value (a string or a list of strings) (got an array)',
    ]);
    expect(errorsOf({ ...base, headers: 'server: x' })).toEqual([
      expect.stringMatching(/^headers: must be an object of response headers/),
    ]);
  });
});

describe('host names', () => {
  it.each([
    ['ｓｈｏｐ．ｅｘａｍｐｌｅ．ｃｏｍ', 'shop.example.com'],
    ['shop\u200b.example.com', 'shop.example.com'],
    ['sh\u00adop.exam\u200dple.com\ufeff', 'shop.example.com'],
    ['ＳＨＯＰ。example.com', 'shop.example.com'],
    ['ｈｔｔｐｓ：／／shop.example.com／p／1', 'shop.example.com'],
    ['bücher.example', 'xn--bcher-kva.example'],
    ['bu\u0308cher.example', 'xn--bcher-kva.example'],
  ])('%j is the site %s', (input, site) => {
    expect(normaliseSite(input)).toBe(site);
  });

  it.each([
    ['an emoji label', '😀.example.com', 'label "😀"'],
    ['a lone surrogate', 'a\ud800b.example.com', 'label'],
    ['a control character', 'a\u0085b.example.com', 'may only hold letters'],
  ])('refuses %s', (_name, input, detail) => {
    const r = tryNormaliseSite(input);
    expect(r.ok ? 'accepted' : r.error.message).toContain(detail);
  });

  it('a site value past 8192 characters is refused without looking at it', () => {
    const r = tryNormaliseSite(`https://shop.example.com/?q=${'x'.repeat(9_000)}`);
    expect(r.ok ? 'accepted' : r.error.detail).toBe('it is longer than 8192 characters; send the host name');
  });
});

describe('the time horizon (parseBatch)', () => {
  const DAY = 86_400_000;
  it('refuses events older than 30 days or more than 5 minutes ahead, with the reason', () => {
    const inputs = [
      { ...base, ts: NOW - EVENT_HORIZON.maxAgeMs },
      { ...base, ts: NOW - EVENT_HORIZON.maxAgeMs - 1 },
      { ...base, ts: new Date(NOW - 45 * DAY).toISOString() },
      { ...base, ts: NOW + EVENT_HORIZON.maxAheadMs },
      { ...base, ts: NOW + EVENT_HORIZON.maxAheadMs + 1 },
      { ...base, ts: NOW + 3 * 3_600_000 },
    ];
    const parsed = parseBatch(inputs, 1, undefined, { now: NOW });
    expect(parsed.lines).toEqual([1, 4]);
    expect(parsed.rejected).toEqual([
      {
        line: 2,
        errors: [
          expect.stringMatching(
            joinRegExp(
              /^ts: is 30 days before now \(2026-10-31T11:59:59\.999Z, got 1\d+\); /,
              /the store takes events of the last 30 days only/,
            ),
          ),
        ],
      },
      {
        line: 3,
        errors: [
          expect.stringMatching(
            /^ts: is 45 days before now \(2026-10-16T12:00:00\.000Z, got "2026-10-16T12:00:00\.000Z"\)/,
          ),
        ],
      },
      {
        line: 5,
        errors: [
          expect.stringMatching(
            joinRegExp(
              /^ts: is 301 seconds after now .*events more than 5 minutes /,
              /in the future are refused — check the crawler's clock/,
            ),
          ),
        ],
      },
      { line: 6, errors: [expect.stringMatching(/^ts: is 3 hours after now/)] },
    ]);
  });

  it('a custom horizon (back-fills, tests) moves the limits', () => {
    const parsed = parseBatch([{ ...base, ts: NOW - 40 * DAY }], 1, undefined, {
      now: NOW,
      horizon: { maxAgeMs: 60 * DAY, maxAheadMs: 0 },
    });
    expect(parsed.rejected).toEqual([]);
  });
});
