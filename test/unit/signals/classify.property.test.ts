/** Properties: classification is total (never throws, always explains itself) over every valid event. */
import fc from 'fast-check';
import {
  BUILT_IN_MARKERS,
  CLASSIFICATION_RULES,
  classifyOutcome,
  EXTRACTION_RESULTS,
  NETWORK_ERRORS,
  normaliseSite,
  OUTCOMES,
  parseEvent,
  parseEventLine,
  type SiteClassifierConfigInput,
  tryNormaliseSite,
} from '@target-health/crawler/events';
import { page } from './helpers';
import { eventSchema } from '@target-health/crawler/events/event-schema';
import { runs } from '../../kit/sizes';

const FIXTURES = [
  'product-page.html',
  'article-mentions-blocked.html',
  'cloudflare-just-a-moment.html',
  'cloudflare-blocked.html',
  'turnstile.html',
  'hcaptcha.html',
  'recaptcha.html',
  'perimeterx-press-and-hold.html',
  'datadome-captcha.html',
  'incapsula-incident.html',
  'akamai-access-denied.html',
  'generic-unusual-traffic.html',
  'near-empty.html',
].map(page);

// Every needle of the catalogue, so random bodies hit markers (and combinations of them) often.
const NEEDLES = BUILT_IN_MARKERS.flatMap((m) => [...(m.bodyAny ?? []), ...(m.bodyAll ?? [])]);

const body = fc.oneof(
  fc.constantFrom(...FIXTURES),
  fc.string({ maxLength: 300 }),
  fc
    .array(fc.oneof(fc.constantFrom(...NEEDLES), fc.string({ maxLength: 40 }), fc.constant('<title>')), {
      maxLength: 12,
    })
    .map((parts) => parts.join(' ')),
);

const HEADER_NAMES = [
  'server',
  'cf-mitigated',
  'x-datadome',
  'set-cookie',
  'x-iinfo',
  'location',
  'x-amzn-waf-action',
  'content-type',
];
const headers = fc.dictionary(
  fc.constantFrom(...HEADER_NAMES),
  fc.oneof(
    fc.constantFrom('cloudflare', 'challenge', '_px3=abc', 'AkamaiGHost', 'https://x.example/captcha'),
    fc.string({ maxLength: 30 }),
  ),
  { maxKeys: 4 },
);

const site = fc.domain().filter((d) => tryNormaliseSite(d).ok);

const eventInput = fc
  .record(
    {
      ts: fc.oneof(
        fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2099, 11, 31) }),
        fc
          .date({ min: new Date(Date.UTC(2000, 0, 1)), max: new Date(Date.UTC(2099, 11, 31)), noInvalidDate: true })
          .map((d) => d.toISOString()),
      ),
      site,
      route: fc.record(
        {
          country: fc.constantFrom('DE', 'us', 'Fr'),
          pool: fc.constantFrom('residential', 'dc-eu'),
          session: fc.constantFrom('sticky', 'rotating'),
        },
        { requiredKeys: [] },
      ),
      pageType: fc.constantFrom('product', 'listing', 'search'),
      response: fc.oneof(
        fc.record({ status: fc.integer({ min: 100, max: 999 }) }),
        fc.record({ networkError: fc.constantFrom(...NETWORK_ERRORS) }),
      ),
      latencyMs: fc.double({ min: 0, max: 600_000, noNaN: true }),
      bytes: fc.nat({ max: 5_000_000 }),
      retries: fc.nat({ max: 10 }),
      credits: fc.double({ min: 0, max: 100, noNaN: true }),
      extraction: fc.oneof(
        fc.record({ result: fc.constantFrom('ok', 'schema_mismatch'), validRecords: fc.nat({ max: 50 }) }),
        fc.record({ result: fc.constant('missing_fields'), missingFields: fc.constant(['price']) }),
        fc.record({ result: fc.constant('empty'), validRecords: fc.constant(0) }),
      ),
      canary: fc.boolean(),
      outcome: fc.constantFrom(...OUTCOMES),
      headers,
      bodySample: body,
      title: fc.string({ maxLength: 60 }),
    },
    { requiredKeys: ['ts', 'site', 'response', 'latencyMs'] },
  )
  .map(({ response, ...rest }) => ({ ...rest, ...response }));

const number = fc.oneof(fc.double(), fc.integer({ min: -10, max: 1_000_000 }));
const norms = fc.record(
  {
    sizeNorm: fc.record({ medianBytes: number, samples: number }),
    recordsNorm: fc.record({ usualRecordsRate: number, samples: number }),
  },
  { requiredKeys: [] },
);

const CONFIGS: (SiteClassifierConfigInput | undefined)[] = [
  undefined,
  { statusOverrides: { '404': 'soft_block', '403': 'ok', '200': 'ok' } },
  { disabledMarkers: BUILT_IN_MARKERS.map((m) => m.id) },
  {
    extraMarkers: [{ id: 'x-1', vendor: 'X', kind: 'challenge', bodyRegex: 'c.ptcha', headers: [{ name: 'server' }] }],
    shortPageBytes: 0,
  },
];

describe('classifyOutcome properties', () => {
  it('never throws on a valid event and always returns a known outcome, rule and reason', () => {
    fc.assert(
      fc.property(eventInput, norms, fc.constantFrom(...CONFIGS), (input, n, config) => {
        const event = eventSchema().parse(input);
        const result = classifyOutcome(event, { ...n, config });
        expect(OUTCOMES).toContain(result.outcome);
        expect(CLASSIFICATION_RULES).toContain(result.rule);
        expect(typeof result.reason).toBe('string');
        expect(result.reason.length).toBeGreaterThan(0);
        if (event.outcome !== undefined) expect(result.outcome).toBe(event.outcome);
      }),
      { numRuns: runs(500) },
    );
  });
});

describe('parsing properties', () => {
  it('parseEvent never throws and explains every rejection', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.jsonValue(),
          eventInput.map((e) => ({ ...e, junk: 1 })),
        ),
        (value) => {
          const result = parseEvent(value);
          if (!result.ok) {
            expect(result.errors.length).toBeGreaterThan(0);
            for (const e of result.errors) expect(e).toMatch(/^[^:\s][^\n]*?: \S/);
          }
        },
      ),
      { numRuns: runs(300) },
    );
  });

  it('parseEventLine never throws and prefixes the line number', () => {
    fc.assert(
      fc.property(fc.string(), fc.nat(), (line, n) => {
        const result = parseEventLine(line, n);
        if (!result.ok) for (const e of result.errors) expect(e.startsWith(`line ${n}: `)).toBe(true);
      }),
    );
  });

  it('normaliseSite is idempotent', () => {
    fc.assert(
      fc.property(fc.oneof(fc.domain(), fc.webUrl(), fc.string()), (input) => {
        const first = tryNormaliseSite(input);
        if (first.ok) expect(normaliseSite(first.site)).toBe(first.site);
      }),
    );
  });
});

it('EXTRACTION_RESULTS matches the generator', () => {
  expect([...EXTRACTION_RESULTS].sort()).toEqual(['empty', 'missing_fields', 'ok', 'schema_mismatch']);
});
