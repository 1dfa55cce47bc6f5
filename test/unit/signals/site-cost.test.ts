/**
 * Length checks come before the one normalisation step that is not linear (Punycode is quadratic in a
 * label's length): a 360 KB host once cost 17–43 s of CPU. The encoder (a pure collaborator) is
 * wrapped to count its calls.
 */
import type * as Punycode from '@target-health/crawler/events/punycode';
import { punycodeEncode } from '@target-health/crawler/events/punycode';
import { tryNormaliseSite } from '@target-health/crawler/events/site';

jest.mock('@target-health/crawler/events/punycode', () => {
  const actual = jest.requireActual<typeof Punycode>('@target-health/crawler/events/punycode');
  return { ...actual, punycodeEncode: jest.fn(actual.punycodeEncode) };
});

const encode = punycodeEncode as jest.MockedFunction<typeof punycodeEncode>;

test('labels and hosts that cannot fit are refused before any Punycode encoding', () => {
  for (const input of [
    `${'ü'.repeat(360_000)}.com`,
    `${'ü'.repeat(60)}.com`,
    `${'ü'.repeat(100)}.${'a'.repeat(500)}.com`,
    `x.${'é'.repeat(600)}`,
  ]) {
    const r = tryNormaliseSite(input);
    expect(r.ok ? 'accepted' : r.error.detail).toMatch(/at most 63 characters|longer than/);
  }
  expect(encode).not.toHaveBeenCalled();
  // 59 code points may still fit, so they are encoded (and turn out too long).
  expect(tryNormaliseSite(`${'ü'.repeat(59)}.com`).ok).toBe(false);
  expect(tryNormaliseSite('bücher.example')).toEqual({ ok: true, site: 'xn--bcher-kva.example' });
  expect(encode).toHaveBeenCalledTimes(2);
});
