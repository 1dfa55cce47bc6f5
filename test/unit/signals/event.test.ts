import { BODY_SAMPLE_CHARS, parseEvent, parseEventLine } from '@target-health/crawler/events';
import { eventSchema } from '@target-health/crawler/events/event-schema';
import { SAMPLE_GAP } from '@target-health/crawler/events/text';
import { BASE_EVENT } from './helpers';

const errorsOf = (input: unknown): string[] => {
  const result = parseEvent(input);
  if (result.ok) throw new Error(`expected errors, got ${JSON.stringify(result.event)}`);
  return result.errors;
};

describe('RequestOutcomeEvent schema', () => {
  it('parses a full event and normalises it', () => {
    const result = parseEvent({
      eventId: '01JPA0Q3D2Y1X7V6N5M4K3J2H1',
      ts: '2025-03-14T11:22:31.120+01:00',
      site: 'https://Shop.Example.com/p/trailrunner-gtx-4',
      route: { country: 'de', pool: 'residential-eu', session: 'sticky-10m' },
      pageType: 'product',
      status: 200,
      latencyMs: 412.5,
      bytes: 148213,
      retries: 1,
      credits: 2.5,
      extraction: { result: 'missing_fields', missingFields: ['price'], validRecords: 0 },
      canary: true,
      headers: { Server: 'cloudflare', 'Set-Cookie': ['a=1', 'b=2'] },
      bodySample: '<html></html>',
      title: '  Trailrunner GTX 4  ',
    });
    expect(result).toEqual({
      ok: true,
      event: {
        eventId: '01JPA0Q3D2Y1X7V6N5M4K3J2H1',
        ts: Date.UTC(2025, 2, 14, 10, 22, 31, 120),
        site: 'shop.example.com',
        route: { country: 'DE', pool: 'residential-eu', session: 'sticky-10m' },
        pageType: 'product',
        status: 200,
        latencyMs: 412.5,
        bytes: 148213,
        retries: 1,
        credits: 2.5,
        extraction: { result: 'missing_fields', missingFields: ['price'], validRecords: 0 },
        canary: true,
        headers: { server: 'cloudflare', 'set-cookie': 'a=1\nb=2' },
        bodySample: '<html></html>',
        title: 'Trailrunner GTX 4',
      },
    });
  });

  it('accepts a minimal network-error event and defaults route to {}', () => {
    const event = eventSchema().parse({
      ts: 1741947751120,
      site: 'shop.example.com',
      networkError: 'timeout',
      latencyMs: 30000,
    });
    expect(event).toEqual({
      ts: 1741947751120,
      site: 'shop.example.com',
      route: {},
      networkError: 'timeout',
      latencyMs: 30000,
    });
  });

  it.each([
    ['2025-03-14T10:22:31Z', Date.UTC(2025, 2, 14, 10, 22, 31)],
    ['2025-03-14T10:22Z', Date.UTC(2025, 2, 14, 10, 22)],
    ['2025-03-14 10:22:31.5z', Date.UTC(2025, 2, 14, 10, 22, 31, 500)],
    ['2025-03-14T10:22:31.123456789Z', Date.UTC(2025, 2, 14, 10, 22, 31, 123)],
    ['2025-03-14T12:22:31+0200', Date.UTC(2025, 2, 14, 10, 22, 31)],
    [1741947751120.7, 1741947751120],
  ])('normalises ts %j to epoch ms', (ts, expected) => {
    expect(eventSchema().parse({ ...BASE_EVENT, ts }).ts).toBe(expected);
  });

  it('cuts a long body sample to what the classifier reads: its head and its tail', () => {
    const event = eventSchema().parse({
      ...BASE_EVENT,
      bodySample: `${'h'.repeat(BODY_SAMPLE_CHARS)}<script>window._cf_chl_opt={}</script>`,
    });
    const sample = event.bodySample ?? '';
    expect(sample.length).toBeLessThanOrEqual(BODY_SAMPLE_CHARS);
    expect(sample.length).toBeGreaterThan(BODY_SAMPLE_CHARS - 2);
    expect(sample.startsWith('hhhh')).toBe(true);
    expect(sample.endsWith('h<script>window._cf_chl_opt={}</script>')).toBe(true);
    expect(sample.split(SAMPLE_GAP)).toHaveLength(2);
    // A sample that fits is kept whole.
    expect(eventSchema().parse({ ...BASE_EVENT, bodySample: 'x'.repeat(BODY_SAMPLE_CHARS) }).bodySample).toBe(
      'x'.repeat(BODY_SAMPLE_CHARS),
    );
  });

  describe('errors name the field and the fix', () => {
    it.each<[string, Record<string, unknown>, string]>([
      [
        'site URL without a real host',
        { site: 'http://x' },
        'site: must be a host name like shop.example.com (got "http://x")',
      ],
      ['site of the wrong type', { site: 42 }, 'site: must be a host name like shop.example.com (got 42)'],
      ['missing ts', { ts: undefined }, 'ts: is required: an ISO-8601 time with a zone'],
      [
        'ts without a zone',
        { ts: '2025-03-14T10:22:31' },
        'ts: must be an ISO-8601 time with a zone like "2025-01-31T12:00:00.000Z", or epoch milliseconds (got ' +
          '"2025-03-14T10:22:31")',
      ],
      [
        'ts in seconds',
        { ts: 1741947751 },
        'ts: looks like epoch seconds (got 1741947751); send epoch milliseconds (seconds × 1000)',
      ],
      [
        'ts not a calendar day',
        { ts: '2025-02-30T00:00:00Z' },
        'ts: is not a real date/time (got "2025-02-30T00:00:00Z")',
      ],
      ['ts out of range', { ts: 5 }, 'ts: is outside 2000-01-01..2100-01-01 (got 5)'],
      [
        'negative latency',
        { latencyMs: -3 },
        'latencyMs: must be the request latency in milliseconds, a number ≥ 0 like 412 (got -3)',
      ],
      [
        'latency as a string',
        { latencyMs: '412' },
        'latencyMs: must be the request latency in milliseconds, a number ≥ 0 like 412 (got "412")',
      ],
      ['missing latency', { latencyMs: undefined }, 'latencyMs: is required: the request latency in milliseconds'],
      ['status out of range', { status: 1000 }, 'status: must be an HTTP status code (an integer 100-999) (got 1000)'],
      ['fractional bytes', { bytes: 1.5 }, 'bytes: must be the response body size in bytes (an integer ≥ 0) (got 1.5)'],
      [
        'unknown network error',
        { status: undefined, networkError: 'refused' },
        'networkError: must be one of connection_reset, timeout, dns, tls, proxy, other (got "refused")',
      ],
      [
        'bad country',
        { route: { country: 'Germany' } },
        'route.country: must be an ISO 3166-1 alpha-2 country code like "DE" (got "Germany")',
      ],
      ['bad pool', { route: { pool: 'eu pool' } }, 'route.pool: must be a proxy pool name'],
      [
        'bad extraction result',
        { extraction: { result: 'partial' } },
        'extraction.result: must be one of ok, missing_fields, schema_mismatch, empty (got "partial")',
      ],
      [
        'empty missing field name',
        { extraction: { result: 'missing_fields', missingFields: [''] } },
        'extraction.missingFields[0]: must be a non-empty field name (got "")',
      ],
      [
        'NUL in a missing field name',
        { extraction: { result: 'missing_fields', missingFields: ['a\u0000b'] } },
        'extraction.missingFields[0]: must be a field name without the NUL character (\\u0000)',
      ],
      [
        'missing fields on ok',
        { extraction: { result: 'ok', missingFields: ['price'] } },
        'extraction.missingFields: lists fields but result is "ok"; use result "missing_fields"',
      ],
      [
        'records on empty',
        { extraction: { result: 'empty', validRecords: 3 } },
        'extraction.validRecords: is 3 but result is "empty"',
      ],
      ['bad outcome', { outcome: 'blocked' }, 'outcome: must be one of ok, hard_block, challenge, soft_block, error'],
      ['reason without outcome', { outcomeReason: 'saw a captcha' }, 'outcomeReason: only makes sense with outcome'],
      ['canary as a string', { canary: 'yes' }, 'canary: must be true or false (true for a canary fetch) (got "yes")'],
      [
        'event id with spaces',
        { eventId: 'a b' },
        'eventId: must be an id of 1-128 printable ASCII characters without spaces (got "a b")',
      ],
      ['headers as a list', { headers: ['server: x'] }, 'headers: must be an object of response headers'],
      ['unknown field with alias', { timestamp: 1 }, 'timestamp: unknown field; did you mean "ts"?'],
      ['snake_case field', { latency_ms: 3 }, 'latency_ms: unknown field; did you mean "latencyMs"?'],
      ['misspelt field', { pagetyp: 'x' }, 'pagetyp: unknown field; did you mean "pageType"?'],
      ['unknown nested field', { route: { contry: 'DE' } }, 'route.contry: unknown field; did you mean "country"?'],
    ])('%s', (_name, patch, expected) => {
      const errors = errorsOf({ ...BASE_EVENT, ...patch });
      expect(errors.some((e) => e.startsWith(expected))).toBe(true);
    });

    it('requires exactly one of status and networkError', () => {
      expect(errorsOf({ ...BASE_EVENT, status: undefined })).toEqual([
        'status: is required unless networkError is set: send status (the HTTP status code) when a response ' +
          'arrived, or networkError when none did',
      ]);
      expect(errorsOf({ ...BASE_EVENT, networkError: 'timeout' })).toEqual([
        'networkError: cannot be sent together with status: a request either got an HTTP response (status) or ' +
          'not (networkError)',
      ]);
    });

    it('reports every problem at once, including the status/networkError rule', () => {
      const errors = errorsOf({ site: 'x', latencyMs: 'slow' });
      expect(errors).toEqual([
        expect.stringMatching(/^ts: is required/),
        expect.stringMatching(/^site: must be a host name like shop\.example\.com \(got "x"\)/),
        expect.stringMatching(/^latencyMs: must be the request latency/),
        expect.stringMatching(/^status: is required unless networkError is set/),
      ]);
    });

    it('rejects a non-object', () => {
      expect(errorsOf([1, 2])).toEqual(['event: must be a JSON object (one request outcome) (got an array)']);
      expect(errorsOf(null)).toEqual(['event: must be a JSON object (one request outcome) (got null)']);
    });
  });
});

describe('parseEventLine', () => {
  it('parses a valid line', () => {
    const result = parseEventLine(JSON.stringify(BASE_EVENT), 1);
    expect(result.ok).toBe(true);
  });

  it('prefixes every error with the line number', () => {
    const result = parseEventLine(JSON.stringify({ ...BASE_EVENT, site: 'http://x', latencyMs: -1 }), 17);
    expect(result).toEqual({
      ok: false,
      errors: [
        'line 17: site: must be a host name like shop.example.com (got "http://x"): "x" is a single label; a ' +
          'site needs at least two, e.g. x.com',
        'line 17: latencyMs: must be the request latency in milliseconds, a number ≥ 0 like 412 (got -1)',
      ],
    });
  });

  it('reports invalid JSON and blank lines', () => {
    const bad = parseEventLine('{"ts": 1,', 3);
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.errors[0]).toMatch(/^line 3: not valid JSON \(.+\); each line must be one JSON object$/);
    expect(parseEventLine('   ', 4)).toEqual({
      ok: false,
      errors: ['line 4: empty line; expected one JSON event object'],
    });
  });
});
