import fc from 'fast-check';
import { boolArray, numberArray, readCountArray, textArray } from '../../../server/db/signal-store/array-literal';
import { isoTimestamp } from '../../../server/db/signal-store/copy-raw';
import { runs } from '../../kit/sizes';

/** Reads a literal back the way PostgreSQL's array_in does for one-dimensional arrays. */
function parseTextArray(literal: string): Array<string | null> {
  const body = literal.slice(1, -1);
  if (body === '') return [];
  const out: Array<string | null> = [];
  let i = 0;
  while (i <= body.length) {
    if (body[i] === '"') {
      let s = '';
      i++;
      while (body[i] !== '"') {
        if (body[i] === '\\') i++;
        s += body[i];
        i++;
      }
      out.push(s);
      i += 2;
    } else {
      const end = body.indexOf(',', i) === -1 ? body.length : body.indexOf(',', i);
      const token = body.slice(i, end);
      out.push(token === 'NULL' ? null : token);
      i = end + 1;
    }
  }
  return out;
}

test('text arrays round-trip any string, including quotes, backslashes, commas, braces and "NULL"', () => {
  fc.assert(
    fc.property(fc.array(fc.option(fc.string(), { nil: null })), (values) => {
      expect(parseTextArray(textArray(values))).toEqual(values);
    }),
  );
  expect(textArray(['NULL', null, 'a,b', '{x}', 'q"\\'])).toBe('{"NULL",NULL,"a,b","{x}","q\\"\\\\"}');
});

test('number and boolean arrays', () => {
  expect(numberArray([1, null, 2.5, 0])).toBe('{1,NULL,2.5,0}');
  expect(boolArray([true, false])).toBe('{t,f}');
  expect(numberArray([])).toBe('{}');
});

test('count arrays read back as written; anything but non-negative integers is refused', () => {
  fc.assert(
    fc.property(fc.array(fc.nat()), fc.array(fc.nat(), { maxLength: 3 }), (values, before) => {
      const into = [...before];
      expect(readCountArray(numberArray(values), into)).toBe(values.length);
      expect(into).toEqual([...before, ...values]);
    }),
    { numRuns: runs(1_000) },
  );
  for (const text of [
    '{1,-2}',
    '{1,NULL}',
    '{1.5}',
    '{1,,2}',
    '{1,}',
    '{,1}',
    '{ 1}',
    '{{1,2}}',
    '1,2',
    '{1',
    '',
    '{1e3}',
  ])
    expect([text, readCountArray(text, [])]).toEqual([text, -1]);
});

test('COPY timestamps equal toISOString for any instant 2000-2100', () => {
  fc.assert(
    fc.property(fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2100, 0, 1) - 1 }), (ms) => {
      expect(isoTimestamp(ms)).toBe(new Date(ms).toISOString());
    }),
    { numRuns: runs(5_000) },
  );
  // Consecutive instants in one minute reuse the cached prefix, across a minute boundary they do not.
  const t = Date.UTC(2026, 10, 30, 23, 59, 59, 999);
  expect([isoTimestamp(t - 1), isoTimestamp(t), isoTimestamp(t + 1)]).toEqual(
    [t - 1, t, t + 1].map((x) => new Date(x).toISOString()),
  );
});
