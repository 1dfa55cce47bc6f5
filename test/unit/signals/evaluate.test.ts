/**
 * The evaluation core on small hand-built page sets: what a crawler would send in each mode, and the
 * tallies (caught, right class, false positives, precision) per vendor and overall.
 */
import { BODY_SAMPLE_CHARS, type Outcome } from '@target-health/crawler/events/event';
import type { ClassifiableEvent } from '@target-health/crawler/events/classify';
import { compileClassifier } from '@target-health/crawler/events/classify';
import { evaluate, eventFor, rightClass, type LabelledPage } from '../../../core/signals/evaluate';

const page = (id: string, body: string, label: LabelledPage['label']): LabelledPage => ({ id, body, label });

describe('eventFor: the event a crawler sends for a labelled page', () => {
  const p = page('cf.html', '<p>caf\u00e9</p>', {
    class: 'challenge',
    vendor: 'Cloudflare',
    typicalStatus: 403,
    headers: { 'cf-mitigated': 'challenge' },
  });

  it('real status and headers; bytes are the full UTF-8 length', () => {
    expect(eventFor(p, 'status-and-headers')).toEqual({
      status: 403,
      bytes: 12,
      bodySample: '<p>caf\u00e9</p>',
      headers: { 'cf-mitigated': 'challenge' },
    });
  });

  it('real status without headers; a recorded status wins over the typical one', () => {
    expect(eventFor(p, 'status-only')).toEqual({ status: 403, bytes: 12, bodySample: '<p>caf\u00e9</p>' });
    expect(eventFor({ ...p, label: { ...p.label, status: 503 } }, 'status-only').status).toBe(503);
  });

  it('body only is a 200, and a page without any status is a 200 in every mode', () => {
    expect(eventFor(p, 'body-only')).toEqual({ status: 200, bytes: 12, bodySample: '<p>caf\u00e9</p>' });
    expect(eventFor(page('x', 'x', { class: 'ok', vendor: 'none' }), 'status-only').status).toBe(200);
  });

  it('a large page is cut as the crawler cuts it, with its full size in bytes', () => {
    const big = 'a'.repeat(BODY_SAMPLE_CHARS + 500);
    const event = eventFor(page('big', big, { class: 'ok', vendor: 'none' }), 'body-only');
    // At most the sample size (a head-and-tail cut may leave a character or two for its gap marker).
    expect(event.bodySample!.length).toBeLessThanOrEqual(BODY_SAMPLE_CHARS);
    expect(event.bodySample!.length).toBeGreaterThan(BODY_SAMPLE_CHARS - 64);
    expect(event.bytes).toBe(BODY_SAMPLE_CHARS + 500);
  });
});

describe('rightClass', () => {
  it.each<[LabelledPage['label']['class'], Outcome, boolean]>([
    ['challenge', 'challenge', true],
    ['challenge', 'hard_block', false],
    ['hard_block', 'soft_block', true],
    ['soft_block', 'hard_block', true],
    ['rate_limit', 'hard_block', true],
    ['rate_limit', 'challenge', false],
    ['hard_block', 'error', false],
  ])('label %s, outcome %s → %s', (label, outcome, expected) => {
    expect(rightClass(label, outcome)).toBe(expected);
  });
});

describe('evaluate', () => {
  // A stand-in classifier with rules simple enough to predict each mode by hand.
  const toy = (event: ClassifiableEvent): { outcome: Outcome } => {
    const body = event.bodySample ?? '';
    if (event.headers?.['x-block'] !== undefined) return { outcome: 'hard_block' };
    if (body.includes('captcha')) return { outcome: 'challenge' };
    if (body.includes('denied')) return { outcome: event.status === 200 ? 'soft_block' : 'hard_block' };
    if (event.status === 403) return { outcome: 'hard_block' };
    return { outcome: 'ok' };
  };
  const pages = [
    page('a1', 'solve this captcha', { class: 'challenge', vendor: 'A' }),
    page('a2', 'access denied', { class: 'challenge', vendor: 'A', typicalStatus: 403 }), // caught, wrong class
    page('b1', 'nothing to see', { class: 'hard_block', vendor: 'B', typicalStatus: 403 }), // status only
    page('b2', 'plain', { class: 'hard_block', vendor: 'B', headers: { 'x-block': '1' } }), // headers only
    page('c1', 'slow down', { class: 'rate_limit', vendor: 'C', typicalStatus: 429 }), // never caught by toy
    page('o1', 'a login form with a captcha', { class: 'ok', vendor: 'A' }), // bait: false positive
    page('o2', 'hello', { class: 'ok', vendor: 'none' }),
  ];

  it('tallies each mode overall', () => {
    const result = evaluate(pages, toy);
    expect(result.pages).toBe(7);
    const [full, status, body] = result.modes;
    expect(full).toMatchObject({
      mode: 'status-and-headers',
      overall: { refusals: 5, caught: 4, rightClass: 3, ordinary: 2, falsePositives: 1 },
    });
    expect(full!.overall.recall).toBeCloseTo(0.8);
    expect(full!.overall.rightClassRate).toBeCloseTo(0.6);
    expect(full!.overall.falsePositiveRate).toBeCloseTo(0.5);
    expect(full!.overall.precision).toBeCloseTo(0.8);
    expect(status).toMatchObject({ mode: 'status-only', overall: { caught: 3, rightClass: 2, falsePositives: 1 } });
    expect(body).toMatchObject({ mode: 'body-only', overall: { caught: 2, rightClass: 1, falsePositives: 1 } });
  });

  it('per vendor (ordinary pages count under the bait they carry), and lists the misses', () => {
    const full = evaluate(pages, toy, ['status-and-headers']).modes[0]!;
    expect(full.vendors.map((v) => v.vendor)).toEqual(['A', 'B', 'C', 'none']);
    expect(full.vendors[0]).toMatchObject({
      refusals: 2,
      caught: 2,
      rightClass: 1,
      ordinary: 1,
      falsePositives: 1,
      recall: 1,
      rightClassRate: 0.5,
    });
    expect(full.vendors[0]!.precision).toBeCloseTo(2 / 3);
    expect(full.vendors[2]).toMatchObject({
      refusals: 1,
      caught: 0,
      recall: 0,
      precision: undefined,
      falsePositiveRate: undefined,
    });
    expect(full.vendors[3]).toMatchObject({
      refusals: 0,
      ordinary: 1,
      falsePositives: 0,
      recall: undefined,
      falsePositiveRate: 0,
    });
    expect(full.misses).toEqual([
      { id: 'a2', vendor: 'A', label: 'challenge', outcome: 'hard_block', kind: 'wrong-class' },
      { id: 'c1', vendor: 'C', label: 'rate_limit', outcome: 'ok', kind: 'missed' },
      { id: 'o1', vendor: 'A', label: 'ok', outcome: 'challenge', kind: 'false-positive' },
    ]);
  });

  it(
    'runs the product classifier: ' + 'a block text on a 403 is caught in every mode where it is served as a refusal',
    () => {
      const classify = compileClassifier();
      const akamai = page(
        'ak',
        '<html><head><title>Access Denied</title></head><body>Reference&#32;&#35;18&#46;1b2c3d</body></html>',
        {
          class: 'hard_block',
          vendor: 'Akamai',
          typicalStatus: 403,
        },
      );
      const result = evaluate(
        [akamai, page('ok', '<title>Shop</title><p>Lamps</p>', { class: 'ok', vendor: 'none' })],
        classify,
      );
      expect(result.modes.map((m) => [m.overall.caught, m.overall.falsePositives])).toEqual([
        [1, 0],
        [1, 0],
        [1, 0],
      ]);
    },
  );
});
