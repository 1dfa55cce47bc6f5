/**
 * The byte-level COPY encoder writes exactly what the readable string definition (copyRow) says, for
 * any event: escapes, NULLs, non-ASCII text, fractional and huge numbers, minute changes within a batch.
 */
import fc from 'fast-check';
import type { Classification } from '@target-health/crawler/events/classify';
import type { RequestOutcomeEvent } from '@target-health/crawler/events/event';
import { CopyPayload } from '../../../server/db/signal-store/copy-payload';
import { copyText } from '../../../server/db/signal-store/copy-raw';
import { runs } from '../../kit/sizes';

const text = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.constantFrom('a\\b', 'tab\there', 'new\nline', 'cr\rlf', 'ü-münchen', '日本', '😀x', 'plain-label'),
);
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const numberValue = fc.oneof(
  fc.nat(),
  fc.integer({ min: -1000, max: 1000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -0, 9, 10, 99, 100, 2 ** 53 - 1, 2 ** 53, 1e21, 0.1, 123.456),
);

const eventArb: fc.Arbitrary<{ event: RequestOutcomeEvent; classification: Classification }> = fc
  .record({
    ts: fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2100, 0, 1) - 1 }),
    site: text,
    eventId: maybe(text),
    country: maybe(text),
    pool: maybe(text),
    session: maybe(text),
    pageType: maybe(text),
    status: maybe(numberValue),
    networkError: maybe(text),
    latencyMs: numberValue,
    bytes: maybe(numberValue),
    retries: maybe(numberValue),
    credits: maybe(numberValue),
    extraction: maybe(
      fc.record(
        { result: text, missingFields: maybe(fc.array(text, { maxLength: 3 })), validRecords: maybe(numberValue) },
        { requiredKeys: ['result'] },
      ),
    ),
    canary: maybe(fc.boolean()),
    outcome: fc.constantFrom('ok', 'hard_block', 'challenge', 'soft_block', 'error'),
    rule: fc.constantFrom('status', 'block_marker', 'size_norm'),
    markerId: maybe(text),
  })
  .map((r) => {
    const event = {
      ts: r.ts,
      site: r.site,
      route: {
        ...(r.country !== undefined ? { country: r.country } : {}),
        ...(r.pool !== undefined ? { pool: r.pool } : {}),
        ...(r.session !== undefined ? { session: r.session } : {}),
      },
      latencyMs: r.latencyMs,
      ...(r.eventId !== undefined ? { eventId: r.eventId } : {}),
      ...(r.pageType !== undefined ? { pageType: r.pageType } : {}),
      ...(r.status !== undefined ? { status: r.status } : {}),
      ...(r.networkError !== undefined ? { networkError: r.networkError } : {}),
      ...(r.bytes !== undefined ? { bytes: r.bytes } : {}),
      ...(r.retries !== undefined ? { retries: r.retries } : {}),
      ...(r.credits !== undefined ? { credits: r.credits } : {}),
      ...(r.extraction !== undefined ? { extraction: r.extraction } : {}),
      ...(r.canary !== undefined ? { canary: r.canary } : {}),
    } as RequestOutcomeEvent;
    const classification = {
      outcome: r.outcome,
      rule: r.rule,
      reason: 'test',
      ...(r.markerId !== undefined ? { evidence: { markerId: r.markerId } } : {}),
    } as Classification;
    return { event, classification };
  });

function encode(
  batch: ReadonlyArray<{ event: RequestOutcomeEvent; classification: Classification }>,
  expectedRows = batch.length,
): Buffer {
  const payload = new CopyPayload(expectedRows);
  for (const { event, classification } of batch) payload.add(event, classification);
  return payload.bytes();
}

test('CopyPayload writes the bytes of copyText for any batch', () => {
  fc.assert(
    fc.property(fc.array(eventArb, { maxLength: 30 }), (batch) => {
      expect(encode(batch).toString('utf8')).toBe(copyText(batch));
    }),
    { numRuns: runs(2_000) },
  );
});

test('the buffer grows past its first guess (long text fields, many rows)', () => {
  const batch = fc.sample(eventArb, { numRuns: 3_000, seed: 42 });
  batch[7]!.event.eventId = 'x'.repeat(100_000);
  expect(encode(batch, 1).toString('utf8')).toBe(copyText(batch));
});
