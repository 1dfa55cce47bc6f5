/** The pure parts of `sites` and `history`: urgency order, filters, times, the band timeline, aggregation. */
import type { SiteSummary } from '../../../server/api/schemas/sites';
import type { Controls } from '../../../core/control/controls';
import type { AssessmentPageRow } from '../../../server/db/assessments';
import type { ControlChange, DecisionEvent } from '../../../server/db/history';
import type { AlertRow } from '../../../core/control/alerts';
import {
  ago,
  buildFleet,
  fleetSchema,
  formatFleet,
  parseBands,
  siteMatcher,
  urgencyOf,
} from '../../../server/fleet/fleet';
import { REASON_ORDER } from '../../../core/scoring/reasons';
import {
  aggregate,
  bucketCount,
  defaultEvery,
  formatHistory,
  historySchema,
  smoothedScoresNote,
  tickRows,
} from '../../../client/on-call/history';
import { parseWhen } from '../../../client/on-call/times';
import { joinRegExp } from '../../kit/regexp';

const NOW = new Date('2026-12-01T12:00:00Z');

function site(name: string, o: Partial<SiteSummary> = {}): SiteSummary {
  return {
    site: name,
    workflowId: `site-health:${name}`,
    band: 'healthy',
    score: 95,
    smoothedScore: 95,
    parserHealth: 99,
    awaitingHuman: false,
    awaitingSince: null,
    problem: null,
    loopStartedAt: '2026-11-01T00:00:00.000Z',
    lastAssessedAt: '2026-12-01T11:59:00.000Z',
    lastChange: null,
    ...o,
  };
}
const all = { bands: null, awaiting: false, site: [] as string[] };

describe('sites: urgency order', () => {
  test('tiers: person > attention > no-score > healthy; lowest smoothed first within a tier; name last', () => {
    const rows = [
      site('healthy-b.com', { smoothedScore: 90 }),
      site('healthy-a.com', { smoothedScore: 90 }),
      site('learning.com', { band: 'learning', score: null, smoothedScore: null }),
      site('quiet.com', { score: null, smoothedScore: 88 }),
      site('degr-70.com', { band: 'degrading', smoothedScore: 70 }),
      site('problem.com', { problem: 'assessment_failed', smoothedScore: 92 }),
      site('degr-55.com', { band: 'degrading', smoothedScore: 55 }),
      site('manual.com', { awaitingHuman: true, awaitingSince: '2026-12-01T09:00:00.000Z', smoothedScore: 97 }),
      site('resist.com', { band: 'resisting', awaitingHuman: true, smoothedScore: 20 }),
      site('healthy-low.com', { smoothedScore: 81 }),
    ];
    const fleet = buildFleet(rows, all, NOW);
    expect(fleet.sites.map((s) => s.site)).toEqual([
      'resist.com',
      'manual.com',
      'degr-55.com',
      'degr-70.com',
      'problem.com',
      'quiet.com',
      'learning.com',
      'healthy-low.com',
      'healthy-a.com',
      'healthy-b.com',
    ]);
    expect(fleet.sites.map((s) => s.urgency)).toEqual([
      'person',
      'person',
      'attention',
      'attention',
      'attention',
      'no-score',
      'no-score',
      'healthy',
      'healthy',
      'healthy',
    ]);
    expect(fleet.counts).toEqual({ learning: 1, healthy: 6, degrading: 2, resisting: 1 });
    expect(fleet.awaiting).toBe(2);
    expect(fleetSchema.parse(fleet)).toEqual(fleet);
  });

  test('urgencyOf: a site without a band yet has no score', () => {
    expect(urgencyOf({ band: null, awaitingHuman: false, problem: null, score: null, lastAssessedAt: null })).toBe(
      'no-score',
    );
  });

  test('filters: bands, awaiting, name (substring or glob)', () => {
    const rows = [
      site('shop.example.com', { band: 'degrading' }),
      site('news.example.org', { band: 'resisting', awaitingHuman: true }),
      site('shop.test'),
    ];
    expect(buildFleet(rows, { ...all, bands: ['degrading', 'resisting'] }, NOW).sites.map((s) => s.site)).toEqual([
      'news.example.org',
      'shop.example.com',
    ]);
    expect(buildFleet(rows, { ...all, awaiting: true }, NOW).sites.map((s) => s.site)).toEqual(['news.example.org']);
    expect(buildFleet(rows, { ...all, site: ['SHOP'] }, NOW).sites.map((s) => s.site)).toEqual([
      'shop.example.com',
      'shop.test',
    ]);
    expect(buildFleet(rows, { ...all, site: ['*.example.*'] }, NOW).sites.map((s) => s.site)).toEqual([
      'news.example.org',
      'shop.example.com',
    ]);
    expect(buildFleet(rows, { ...all, site: ['shop.?est'] }, NOW).sites.map((s) => s.site)).toEqual(['shop.test']);
    // A glob matches the whole name; the dot is a dot.
    expect(siteMatcher(['shop*'])('news.shop.com')).toBe(false);
    expect(siteMatcher(['a.c'])('abc')).toBe(false);
  });

  test('--band: comma lists and repeats, one line for a typo or stopped', () => {
    expect(parseBands([])).toBeNull();
    expect(parseBands(['resisting,degrading', 'Resisting'])).toEqual(['resisting', 'degrading']);
    expect(() => parseBands(['resistng'])).toThrow(
      '--band: "resistng" is not a band; use learning, healthy, degrading, resisting (repeat --band or ' +
        'separate with commas)',
    );
    expect(() => parseBands(['stopped'])).toThrow(/^--band: a stopped loop has ended/);
    expect(() => siteMatcher([' '])).toThrow(/^--site: empty pattern/);
  });

  test('the table: summary line, urgent first, waiting since and the last change', () => {
    const fleet = buildFleet(
      [
        site('calm.com'),
        site('wall.com', {
          band: 'resisting',
          score: 12,
          smoothedScore: 18,
          awaitingHuman: true,
          awaitingSince: '2026-12-01T09:55:00.000Z',
          lastChange: {
            at: '2026-12-01T09:55:00.000Z',
            actor: 'control-loop',
            change: 'paused, canaries only, band degrading→resisting',
            reason: 'resisting (score 12, smoothed 18): hard_block',
            version: 7,
          },
        }),
      ],
      all,
      NOW,
    );
    const lines = formatFleet(fleet, NOW).split('\n');
    expect(lines[0]).toBe('2 sites: 1 resisting, 0 degrading, 0 learning, 1 healthy; 1 waiting for a person');
    expect(lines[2]).toMatch(
      /^SITE\s+BAND\s+SCORE \/ SMOOTHED\s+PARSER\s+WAITING FOR A PERSON SINCE\s+LAST CHANGE AND WHY$/,
    );
    expect(lines[3]).toMatch(
      joinRegExp(
        /^wall\.com\s+resisting\s+12 \/ 18\s+99\s+2026-12-01 09:55Z \(2h 05m ago\)\s+2h 05m ago control-loop: /,
        /paused, canaries only, band degrading→resisting — resisting \(score 12, smoothed 18\): hard_block$/,
      ),
    );
    expect(lines[4]).toMatch(/^calm\.com\s+healthy\s+95 \/ 95\s+99\s+—\s+—$/);
    expect(formatFleet(buildFleet([], all, NOW), NOW)).toBe(
      '0 sites: 0 resisting, 0 degrading, 0 learning, 0 healthy; 0 waiting for a person\n',
    );
  });

  test('ago', () => {
    expect(ago('2026-12-01T11:59:30Z', NOW)).toBe('30s ago');
    expect(ago('2026-12-01T11:15:00Z', NOW)).toBe('45m ago');
    expect(ago('2026-11-28T10:00:00Z', NOW)).toBe('3d 02h ago');
  });
});

describe('history: times', () => {
  test('ISO, dates, now and times ago', () => {
    expect(parseWhen('--from', '2026-11-24T10:00:00Z', NOW).toISOString()).toBe('2026-11-24T10:00:00.000Z');
    expect(parseWhen('--from', '2026-11-24T10:00:00+02:00', NOW).toISOString()).toBe('2026-11-24T08:00:00.000Z');
    expect(parseWhen('--from', '2026-11-24', NOW).toISOString()).toBe('2026-11-24T00:00:00.000Z');
    expect(parseWhen('--to', 'now', NOW)).toEqual(NOW);
    expect(parseWhen('--from', '-6h', NOW).toISOString()).toBe('2026-12-01T06:00:00.000Z');
    expect(parseWhen('--from', '2d', NOW).toISOString()).toBe('2026-11-29T12:00:00.000Z');
    expect(parseWhen('--from', '-90m', NOW).toISOString()).toBe('2026-12-01T10:30:00.000Z');
  });
  test('a bad time names the flag and the forms', () => {
    expect(() => parseWhen('--from', 'yesterday', NOW)).toThrow(
      '--from: "yesterday" is not a time; use an ISO-8601 time with a zone (2026-11-24T10:00:00Z), a UTC date ' +
        '(2026-11-24), now, or a time ago like -6h, 2d',
    );
    expect(() => parseWhen('--to', '2026-11-24T10:00:00', NOW)).toThrow(/^--to: "2026-11-24T10:00:00" is not a time/);
    expect(() => parseWhen('--from', '-999999w', NOW)).toThrow(/^--from: "-999999w" reaches back before 1970/);
  });
});

const controls = (band: Controls['band'], concurrencyLimit: number, paused = false): Controls => ({
  concurrencyLimit,
  revisitMultiplier: 1,
  paused,
  canaryOnly: paused,
  effectiveCostMultiplier: 1,
  band,
  reason: band,
});
/** A stored tick; without `stored`, one stored before the smoothed score was (no scoring step). */
function tick(
  n: number,
  at: string,
  score: number | null,
  reasons: string[] = [],
  stored?: Pick<AssessmentPageRow, 'smoothedScore' | 'scoredBand'>,
): AssessmentPageRow {
  return {
    assessmentKey: `s/c1/${n}`,
    workflowId: 'site-health:s',
    chainId: 'c1',
    tick: n,
    assessedAt: at,
    state: score === null ? 'insufficient-data' : 'scored',
    score,
    smoothedScore: stored?.smoothedScore ?? null,
    scoredBand: stored?.scoredBand ?? null,
    parserHealth: 98,
    reasons,
  };
}
function change(
  at: string,
  before: Controls | null,
  after: Controls,
  key: string | null,
  actor = 'control-loop',
  decisionKey: string | null = null,
): ControlChange {
  return {
    at: new Date(at),
    changedAt: new Date(at),
    actor,
    reason: after.reason,
    oldControls: before,
    newControls: { ...after, version: 1 },
    assessmentKey: key,
    decisionKey,
  };
}

describe('history: the band timeline', () => {
  const ticks = [
    tick(1, '2026-12-01T10:00:00.000000Z', 95),
    tick(2, '2026-12-01T10:01:00.000000Z', 60, ['hard_block']),
    tick(3, '2026-12-01T10:02:00.000000Z', 30, ['hard_block', 'challenge']),
    tick(4, '2026-12-01T10:03:00.000000Z', 35, ['hard_block']),
    tick(5, '2026-12-01T10:04:00.000000Z', null),
  ];
  const changes = [
    change('2026-12-01T10:01:00Z', controls('healthy', 16), controls('degrading', 12), 's/c1/2'),
    change('2026-12-01T10:02:00Z', controls('degrading', 12), controls('resisting', 12, true), 's/c1/3'),
    // A decision's change names the assessment that led to it (tick 3) but belongs to its own time.
    change(
      '2026-12-01T10:03:30Z',
      controls('resisting', 12, true),
      controls('healthy', 8),
      's/c1/3',
      'human:alice',
      'd/1',
    ),
  ];
  const decisions: DecisionEvent[] = [
    { at: new Date('2026-12-01T10:03:30Z'), kind: 'resume', who: 'alice', why: 'checked', decisionKey: 'd/1' },
  ];

  test('carried from the band before, changed by ticks and decisions, decisions on the tick before them', () => {
    const rows = tickRows(ticks, changes, decisions, 'healthy', null);
    expect(rows.map((r) => r.band)).toEqual(['healthy', 'degrading', 'resisting', 'resisting', 'healthy']);
    expect(rows[1]!.actions.map((a) => a.change)).toEqual(['concurrency 16→12, band healthy→degrading']);
    expect(rows[3]!.actions.map((a) => `${a.actor}: ${a.change}`)).toEqual([
      'human:alice: concurrency 12→8, unpaused, all traffic, band resisting→healthy',
    ]);
    expect(rows[3]!.decisions).toEqual([
      { at: '2026-12-01T10:03:30.000Z', kind: 'resume', who: 'alice', why: 'checked' },
    ]);
    expect(rows.every((r) => r.smoothedScore === null && r.loopActions === null)).toBe(true);
    expect(rows[0]!.at).toBe('2026-12-01T10:00:00.000Z');
  });

  test('the band says what set it: the rule of the tick that paused it, carried until the next change', () => {
    const ruled = [
      tick(1, '2026-12-01T10:00:00.000000Z', 95),
      tick(2, '2026-12-01T10:01:00.000000Z', 75, ['majority_refusal', 'challenge']),
      // Paused: canaries only, the rule no longer fires; the band is still the rule's.
      tick(3, '2026-12-01T10:02:00.000000Z', null),
    ];
    const pause = change('2026-12-01T10:01:00Z', controls('healthy', 16), controls('resisting', 16, true), 's/c1/2');
    const rows = tickRows(ruled, [pause], [], 'healthy', null);
    // The band carried in from before the range: what set it is not read.
    expect(rows.map((r) => r.bandCause)).toEqual([
      null,
      { kind: 'rule', rule: 'majority_refusal' },
      { kind: 'rule', rule: 'majority_refusal' },
    ]);
    const text = formatHistory(
      historySchema.parse({
        source: { kind: 'stored' },
        site: 's',
        from: '2026-12-01T10:00:00.000Z',
        to: '2026-12-01T10:03:00.000Z',
        ticks: 1,
        everyMs: null,
        smoothedScores: 'x',
        rows,
      }),
    ).split('\n');
    expect(text[0]).toBe('s: 1 tick from 2026-12-01 10:00:00Z to 2026-12-01 10:03:00Z, one row per tick');
    expect(text[4]).toMatch(/^2026-12-01 10:01:00Z {2}2 {5}resisting \(paused by the majority-refusal rule\) {2}75 \//);
    // A person's decision sets the band by hand.
    const resumed = tickRows(ticks, changes, decisions, 'healthy', null);
    expect(resumed[4]!.bandCause).toEqual({ kind: 'person' });
  });

  test('a route alert beside the reasons of the tick that raised it, in the rows, the buckets and JSON', () => {
    const alerts: AlertRow[] = [
      // A dead pool alerted at 10:01:00.4 (the tick's transaction): on tick 2's row.
      { at: '2026-12-01T10:01:00.400Z', kind: 'route_alert', text: 'route problem — pool=dc-3 (85 % refused)' },
      { at: '2026-12-01T09:59:00.000Z', kind: 'parser_health', text: 'parser health 40 (below 70)' },
    ];
    const rows = tickRows(ticks, changes, decisions, 'healthy', null, alerts);
    expect(rows.map((r) => r.alerts.map((a) => a.kind))).toEqual([['parser_health'], ['route_alert'], [], [], []]);
    const doc = historySchema.parse({
      source: { kind: 'stored' },
      site: 's',
      from: '2026-12-01T10:00:00.000Z',
      to: '2026-12-01T10:05:00.000Z',
      ticks: 5,
      everyMs: null,
      smoothedScores: 'x',
      rows,
    });
    const line = formatHistory(doc)
      .split('\n')
      .find((l) => l.startsWith('2026-12-01 10:01:00Z'))!;
    expect(line).toContain('hard_block + route alert: route problem — pool=dc-3 (85 % refused)');
    const [bucket] = aggregate(rows, 3_600_000);
    expect(bucket!.alerts).toEqual([alerts[1], alerts[0]]);
    expect(formatHistory({ ...doc, everyMs: 3_600_000, rows: [bucket!] })).toContain(
      '+ parser alert: parser health 40 (below 70) + route alert: route problem — pool=dc-3',
    );
  });

  test('no band before the first change; a decision before the first tick goes on the first row', () => {
    const rows = tickRows(ticks.slice(3), changes, decisions, null, null);
    // The changes of ticks 2 and 3 lie outside these ticks: they still set the band (loose, in time order).
    expect(rows.map((r) => r.band)).toEqual(['resisting', 'healthy']);
    const first = tickRows([tick(9, '2026-12-01T11:00:00Z', 90)], [], decisions, null, null);
    expect(first[0]!.band).toBeNull();
    expect(first[0]!.decisions).toHaveLength(1);
  });

  test("smoothed scores and the loop's own actions from its recent ticks, same chain only", () => {
    const live = {
      chainId: 'c1',
      ticks: [
        {
          tick: 2,
          assessedAt: '2026-12-01T10:01:00.000Z',
          state: 'scored' as const,
          score: 60,
          smoothedScore: 71,
          band: 'degrading' as const,
          scoredBand: 'degrading' as const,
          parserHealth: 98,
          reasons: ['hard_block'],
          routeVerdict: 'site-wide',
          actions: ['concurrency 16→12, band healthy→degrading', 'notified owner (degrading)'],
        },
      ],
    };
    const rows = tickRows(ticks, changes, decisions, 'healthy', live);
    expect(rows[1]!.smoothedScore).toBe(71);
    expect(rows[1]!.loopActions).toEqual(['concurrency 16→12, band healthy→degrading', 'notified owner (degrading)']);
    expect(rows[0]!.smoothedScore).toBeNull();
    expect(tickRows(ticks, changes, decisions, 'healthy', { ...live, chainId: 'other' })[1]!.smoothedScore).toBeNull();
    expect(rows[1]!.scoredBand).toBe('degrading');
    expect(smoothedScoresNote(ticks, live, null)).toBe(
      'not stored with these 5 ticks (stored before the release that stores it): 1 of those from the running loop ' +
        '(its last 50 ticks), 4 without',
    );
    const text = formatHistory(
      historySchema.parse({
        source: { kind: 'stored' },
        site: 's',
        from: '2026-12-01T10:00:00.000Z',
        to: '2026-12-01T10:05:00.000Z',
        ticks: 5,
        everyMs: null,
        smoothedScores: 'from the running loop',
        rows,
      }),
    );
    // The change is listed once, the notification beside it.
    expect(text).toContain('concurrency 16→12, band healthy→degrading; notified owner (degrading)');
    expect(text).toContain('DECISION resume by alice at 2026-12-01 10:03:30Z: checked');
    expect(text.split('\n')[0]).toBe('s: 5 ticks from 2026-12-01 10:00:00Z to 2026-12-01 10:05:00Z, one row per tick');
  });
});

describe('history: smoothed scores stored with the ticks', () => {
  const live = (smoothedScore: number) => ({
    chainId: 'c1',
    ticks: [2, 3].map((n) => ({
      tick: n,
      assessedAt: `2026-12-01T10:0${n - 1}:00.000Z`,
      state: 'scored' as const,
      score: 60,
      smoothedScore,
      band: 'degrading' as const,
      scoredBand: 'degrading' as const,
      parserHealth: 98,
      reasons: ['hard_block'],
      routeVerdict: 'site-wide',
      actions: [],
    })),
  });

  test("stored first; the loop's recent ticks only for a tick stored without one; a stored null stays null", () => {
    const ticks = [
      tick(1, '2026-12-01T10:00:00.000000Z', 95),
      tick(2, '2026-12-01T10:01:00.000000Z', 60, [], { smoothedScore: 88, scoredBand: 'healthy' }),
      // A stored step without a smoothed score yet (the site had none): not replaced by the loop's.
      tick(3, '2026-12-01T10:02:00.000000Z', null, [], { smoothedScore: null, scoredBand: 'healthy' }),
    ];
    const rows = tickRows(ticks, [], [], 'healthy', live(71));
    expect(rows.map((r) => [r.smoothedScore, r.scoredBand])).toEqual([
      [null, null],
      [88, 'healthy'],
      [null, 'healthy'],
    ]);
    expect(smoothedScoresNote(ticks, live(71), null)).toBe(
      'stored with each tick, but not with 1 tick stored before the release that stores it: 0 of those from the ' +
        'running loop (its last 50 ticks), 1 without',
    );
    // Every tick stored: the loop is not needed for them, whether it answers or not.
    expect(smoothedScoresNote(ticks.slice(1), null, 'the site has no running loop')).toBe('stored with each tick');
    expect(smoothedScoresNote(ticks, null, 'the site has no running loop')).toBe(
      "stored with each tick, but not with 1 tick stored before the release that stores it; the running loop's " +
        'recent ticks are not available (the site has no running loop)',
    );
    const text = formatHistory(
      historySchema.parse({
        source: { kind: 'stored' },
        site: 's',
        from: '2026-12-01T10:00:00.000Z',
        to: '2026-12-01T10:03:00.000Z',
        ticks: 3,
        everyMs: null,
        smoothedScores: smoothedScoresNote(ticks.slice(1), null, null),
        rows: rows.slice(1),
      }),
    ).split('\n');
    expect(text[3]).toMatch(/^2026-12-01 10:01:00Z\s+2\s+healthy\s+60 \/ 88\s/);
    expect(text[text.length - 2]).toBe('smoothed: stored with each tick');
  });
});

describe('history: aggregation', () => {
  test('the default interval keeps rows under 500; none when the ticks fit', () => {
    expect(defaultEvery(86_400_000, 500)).toBeNull();
    expect(defaultEvery(86_400_000, 1440)).toBe(300_000); // a day of 60 s ticks: 5 min rows (289)
    expect(defaultEvery(14 * 86_400_000, 20_160)).toBe(3_600_000); // 14 days: hourly (337)
    expect(defaultEvery(90 * 86_400_000, 129_600)).toBe(21_600_000); // 90 days: 6 h (361)
    expect(bucketCount(new Date('2026-12-01T10:30:00Z'), new Date('2026-12-01T12:00:00Z'), 3_600_000)).toBe(2);
  });

  test(
    'reasons raised on as many ticks are listed by weight, ' + 'the order status lists them in (not alphabetically)',
    () => {
      const at = (i: number): string => new Date(Date.parse('2026-12-01T10:00:00Z') + i * 60_000).toISOString();
      const ticks = [
        ['latency', 'extraction_empty'],
        ['challenge', 'cost_bytes'],
        ['hard_block', 'route_specific'],
        ['total_refusal', 'canary_mismatch'],
      ].map((r, i) => tick(i + 1, at(i), 50, r));
      const [bucket] = aggregate(tickRows(ticks, [], [], 'healthy', null), 3_600_000);
      expect(bucket!.reasons.map((r) => r.reason)).toEqual([
        'total_refusal',
        'hard_block',
        'challenge',
        'latency',
        'canary_mismatch',
        'route_specific',
        'extraction_empty',
        'cost_bytes',
      ]);
      expect(bucket!.reasons.map((r) => r.reason)).toEqual(
        [...REASON_ORDER].filter((r) => bucket!.reasons.some((x) => x.reason === r)),
      );
    },
  );

  test('one row per interval: worst band, score ranges, reasons by frequency, every action kept', () => {
    const ticks = [0, 1, 2, 3, 4, 5].map((i) =>
      tick(
        i + 1,
        new Date(Date.parse('2026-12-01T10:00:00Z') + i * 20 * 60_000).toISOString(),
        [90, 80, 60, 40, 50, null][i]!,
        i >= 2 ? ['hard_block', ...(i === 3 ? ['challenge'] : [])] : [],
      ),
    );
    const changes = [
      change('2026-12-01T10:40:00Z', controls('healthy', 16), controls('degrading', 12), 's/c1/3'),
      change('2026-12-01T11:00:00Z', controls('degrading', 12), controls('resisting', 12, true), 's/c1/4'),
    ];
    const buckets = aggregate(tickRows(ticks, changes, [], 'healthy', null), 3_600_000);
    expect(buckets).toHaveLength(2);
    expect(buckets[0]).toMatchObject({
      from: '2026-12-01T10:00:00.000Z',
      to: '2026-12-01T11:00:00.000Z',
      ticks: 3,
      band: 'degrading',
      bands: { healthy: 2, degrading: 1 },
      score: { min: 60, mean: 76.7, max: 90 },
      smoothedScore: null,
      reasons: [{ reason: 'hard_block', ticks: 1 }],
    });
    expect(buckets[0]!.actions.map((a) => a.change)).toEqual(['concurrency 16→12, band healthy→degrading']);
    expect(buckets[1]).toMatchObject({
      ticks: 3,
      band: 'resisting',
      score: { min: 40, mean: 45, max: 50 },
      reasons: [
        { reason: 'hard_block', ticks: 3 },
        { reason: 'challenge', ticks: 1 },
      ],
    });
    const doc = historySchema.parse({
      source: { kind: 'stored' },
      site: 's',
      from: '2026-12-01T10:00:00.000Z',
      to: '2026-12-01T12:00:00.000Z',
      ticks: 6,
      everyMs: 3_600_000,
      smoothedScores: 'n/a',
      rows: buckets,
    });
    const text = formatHistory(doc).split('\n');
    expect(text[0]).toBe(
      's: 6 ticks from 2026-12-01 10:00:00Z to 2026-12-01 12:00:00Z, one row per 1 h (2 rows; --every to change)',
    );
    expect(text[3]).toMatch(
      joinRegExp(
        /^2026-12-01 10:00:00Z\s+3\s+degrading\s+76\.7 \(60–90\)\s+—\s+98\s+/,
        /hard_block×1\s+concurrency 16→12, band healthy→degrading$/,
      ),
    );
  });
});
