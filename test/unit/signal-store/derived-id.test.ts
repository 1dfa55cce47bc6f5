/**
 * Ids derived from content (events sent without eventId): one id per meaning — the same event spelt
 * differently gets the same id, any difference in what it says gets another.
 */
import fc from 'fast-check';
import { derivedEventId } from '../../../server/db/signal-store/derived-id';
import { parseEvent, type RequestOutcomeEvent } from '@target-health/crawler/events/event';
import { runs } from '../../kit/sizes';

const parse = (input: Record<string, unknown>): RequestOutcomeEvent => {
  const r = parseEvent(input);
  if (!r.ok) throw new Error(r.errors.join('; '));
  return r.event;
};

const TS = Date.UTC(2026, 10, 30, 10, 22, 31, 120);
const base = {
  ts: TS,
  site: 'shop.example.com',
  route: { country: 'DE', pool: 'res' },
  status: 200,
  latencyMs: 412,
  bytes: 1000,
};

test('the same event spelt differently has one id', () => {
  const id = derivedEventId(parse(base));
  expect(id).toMatch(/^h1:[\w-]{22}$/);
  const respelt = parse({
    latencyMs: 412,
    bytes: 1000,
    status: 200,
    route: { pool: 'res', country: 'de' },
    site: 'https://Shop.Example.com:443/p/1',
    ts: new Date(TS).toISOString(),
    canary: false,
  });
  expect(derivedEventId(respelt)).toBe(id);
  expect(derivedEventId(parse({ ...base, headers: { B: '2', a: '1' } }))).toBe(
    derivedEventId(parse({ ...base, headers: { a: '1', b: '2' } })),
  );
});

test('any difference in content gives another id', () => {
  const variants: Array<Record<string, unknown>> = [
    base,
    { ...base, ts: TS + 1 },
    { ...base, site: 'shop.example.org' },
    { ...base, route: { country: 'DE' } },
    { ...base, route: { country: 'DE', pool: 'res', session: 's' } },
    { ...base, latencyMs: 412.5 },
    { ...base, bytes: 1001 },
    { ...base, retries: 0 },
    { ...base, canary: true },
    { ...base, pageType: 'product' },
    { ...base, extraction: { result: 'ok' } },
    { ...base, extraction: { result: 'ok', validRecords: 0 } },
    { ...base, outcome: 'ok' },
    { ...base, title: 'a' },
    { ...base, bodySample: 'a' },
    { ...base, title: 'ab' },
    { ...base, title: 'a', bodySample: 'b' },
    { ...base, title: 'ab', bodySample: '' },
    { ...base, headers: { a: '1' } },
    { ...base, headers: { a: '2' } },
  ];
  const ids = variants.map((v) => derivedEventId(parse(v)));
  expect(new Set(ids).size).toBe(variants.length);
});

test('ids of generated events differ exactly when their canonical content does', () => {
  const arb = fc.record({
    ts: fc.integer({ min: TS, max: TS + 5 }),
    status: fc.constantFrom(200, 403),
    latencyMs: fc.constantFrom(1, 2),
    body: fc.option(fc.constantFrom('a', 'b', '😀'), { nil: undefined }),
  });
  fc.assert(
    fc.property(arb, arb, (a, b) => {
      const ea = parse({
        ...base,
        ts: a.ts,
        status: a.status,
        latencyMs: a.latencyMs,
        ...(a.body !== undefined ? { bodySample: a.body } : {}),
      });
      const eb = parse({
        ...base,
        ts: b.ts,
        status: b.status,
        latencyMs: b.latencyMs,
        ...(b.body !== undefined ? { bodySample: b.body } : {}),
      });
      expect(derivedEventId(ea) === derivedEventId(eb)).toBe(JSON.stringify(ea) === JSON.stringify(eb));
    }),
    { numRuns: runs(2_000) },
  );
});
