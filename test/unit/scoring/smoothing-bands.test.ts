import fc from 'fast-check';
import {
  DEFAULT_SCORING_CONFIG,
  INITIAL_SITE_STATE,
  INITIAL_SMOOTHED_SCORE,
  type HealthBand,
  type SiteScoringState,
  type WindowInput,
  advanceSiteState,
  assess,
  bandFor,
  nextBand,
  parseScoringConfig,
  smoothScore,
  smoothingAlpha,
} from '../../../core/scoring';

const MINUTE = 60_000;

describe('smoothing (time-aware EWMA)', () => {
  test('alpha = 1 - 2^(-dt/halfLife)', () => {
    expect(smoothingAlpha(600_000, 600_000)).toBe(0.5); // one half-life: half the weight
    expect(smoothingAlpha(1_200_000, 600_000)).toBe(0.75);
    expect(smoothingAlpha(0, 600_000)).toBe(0);
    // One minute at the default 10-minute half-life: 1 - 2^-0.1 ≈ 0.0670.
    expect(smoothingAlpha(MINUTE, DEFAULT_SCORING_CONFIG.smoothing.halfLifeMs)).toBeCloseTo(0.066967, 6);
  });

  test('the first score is taken as is; later ones move the value by alpha', () => {
    const first = smoothScore(INITIAL_SMOOTHED_SCORE, 90, MINUTE);
    expect(first).toEqual({ value: 90, pendingMs: 0 });
    // One half-life later a 50 pulls 90 halfway: 70.
    expect(smoothScore(first, 50, 600_000).value).toBe(70);
  });

  test('a missing score keeps the value and its time counts toward the next score', () => {
    let s = smoothScore(INITIAL_SMOOTHED_SCORE, 90, MINUTE);
    for (let i = 0; i < 9; i++) s = smoothScore(s, null, MINUTE);
    expect(s).toEqual({ value: 90, pendingMs: 9 * MINUTE });
    // 10 minutes since the last score in total = one half-life: 90 → (90 + 50)/2 = 70.
    expect(smoothScore(s, 50, MINUTE)).toEqual({ value: 70, pendingMs: 0 });
  });

  test('ticks of any length agree: two 5-minute steps equal one 10-minute step toward a constant score', () => {
    const a = smoothScore(smoothScore({ value: 100, pendingMs: 0 }, 40, 5 * MINUTE), 40, 5 * MINUTE).value ?? NaN;
    const b = smoothScore({ value: 100, pendingMs: 0 }, 40, 10 * MINUTE).value ?? NaN;
    expect(a).toBeCloseTo(b, 12);
    expect(b).toBe(70);
  });

  test('stays between the previous value and the new score', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 100, noNaN: true }),
        fc.integer({ min: 0, max: 100 }),
        fc.integer({ min: 0, max: 86_400_000 }),
        (prev, score, dt) => {
          const v = smoothScore({ value: prev, pendingMs: 0 }, score, dt).value ?? NaN;
          return v >= Math.min(prev, score) - 1e-9 && v <= Math.max(prev, score) + 1e-9;
        },
      ),
    );
  });

  test('rejects negative or non-finite elapsed time', () => {
    expect(() => smoothScore(INITIAL_SMOOTHED_SCORE, 50, -1)).toThrow(RangeError);
    expect(() => smoothScore(INITIAL_SMOOTHED_SCORE, 50, Number.NaN)).toThrow(RangeError);
  });
});

describe('bands with hysteresis (margin 3)', () => {
  test('plain thresholds without history: 80-100 healthy, 50-79 degrading, below 50 resisting', () => {
    expect([100, 80, 79, 50, 49, 0].map((s) => bandFor(s))).toEqual([
      'healthy',
      'healthy',
      'degrading',
      'degrading',
      'resisting',
      'resisting',
    ]);
    expect(nextBand(null, 79)).toBe('degrading');
    expect(nextBand('learning', 80)).toBe('healthy');
    expect(nextBand('stopped', 10)).toBe('resisting');
  });

  test.each<[HealthBand, number, HealthBand]>([
    ['healthy', 77, 'healthy'], // 3 below 80 is not yet past the margin
    ['healthy', 76, 'degrading'],
    ['degrading', 82, 'degrading'],
    ['degrading', 83, 'healthy'],
    ['degrading', 47, 'degrading'],
    ['degrading', 46, 'resisting'],
    ['resisting', 52, 'resisting'],
    ['resisting', 53, 'degrading'],
    ['healthy', 46, 'resisting'], // past both boundaries: two bands at once
    ['resisting', 83, 'healthy'],
    ['healthy', 47, 'degrading'],
  ])('from %s, score %p → %s', (previous, score, expected) => {
    expect(nextBand(previous, score)).toBe(expected);
  });

  test('a score hovering around a boundary does not flap', () => {
    const hovering = fc.array(fc.integer({ min: 77, max: 82 }), { minLength: 1, maxLength: 200 });
    fc.assert(
      fc.property(fc.constantFrom<HealthBand>('healthy', 'degrading'), hovering, (start, scores) => {
        let band: HealthBand = start;
        for (const s of scores) band = nextBand(band, s);
        return band === start;
      }),
    );
  });

  test('hysteresis must fit inside the degrading band', () => {
    expect(() => parseScoringConfig({ bands: { hysteresis: 15 } })).toThrow(
      'bands.hysteresis: must be less than half the width of the degrading band',
    );
  });
});

describe('smoothing + bands over time (default 10-minute half-life, 1-minute ticks)', () => {
  const baseline: WindowInput = { requests: 100_000, hardBlocks: 0, challenges: 0, softBlocks: 0, p95LatencyMs: 200 };
  const good: WindowInput = { requests: 300, hardBlocks: 0, challenges: 0, softBlocks: 0, p95LatencyMs: 200 };
  // Everything refused (a third each way, every rate ≥ 20 points → capped) and 5× slower: score 0, the
  // worst possible minute. One such tick is not a total refusal (that needs two).
  const terrible: WindowInput = {
    requests: 300,
    hardBlocks: 100,
    challenges: 100,
    softBlocks: 100,
    p95LatencyMs: 1000,
  };
  // hb 20% (→ 35), challenges 20% (→ 25), latency 3× (→ 15): score 25, refusing only 40% (no total refusal).
  const bad: WindowInput = { requests: 300, hardBlocks: 60, challenges: 60, softBlocks: 0, p95LatencyMs: 600 };
  const tooSmall: WindowInput = { requests: 20, hardBlocks: 20, challenges: 0, softBlocks: 0, p95LatencyMs: 200 };

  function run(windows: WindowInput[]): Array<{ band: HealthBand; score: number | null }> {
    let state: SiteScoringState = INITIAL_SITE_STATE;
    return windows.map((current) => {
      const a = assess({ current, baseline, previousRefusal: state.refusalStreak });
      const t = advanceSiteState(state, a, MINUTE);
      state = t.state;
      return { band: t.band, score: t.smoothedScore };
    });
  }

  test('one bad minute between good ones does not change the band', () => {
    const ticks = run([...Array<WindowInput>(30).fill(good), terrible, ...Array<WindowInput>(30).fill(good)]);
    expect(new Set(ticks.map((t) => t.band))).toEqual(new Set(['healthy']));
    // 100 → 100 × 2^-0.1 = 93.3 → 93 at the bad minute, then back up.
    expect(ticks[30]?.score).toBe(93);
  });

  test('a sustained drop changes the band within the hour', () => {
    expect(assess({ current: bad, baseline }).health.score).toBe(25);
    const ticks = run([...Array<WindowInput>(10).fill(good), ...Array<WindowInput>(60).fill(bad)]);
    const minute = (band: HealthBand) => ticks.findIndex((t) => t.band === band) - 9; // minutes after the drop
    // Smoothed = 25 + 75 × 2^(-t/10). Degrading once it rounds to ≤ 76: 2^(-t/10) < 51.5/75 → t > 5.4 → minute 6.
    expect(minute('degrading')).toBe(6);
    // Resisting once it rounds to ≤ 46: 2^(-t/10) < 21.5/75 → t > 18.0 → minute 19.
    expect(minute('resisting')).toBe(19);
    expect(ticks.at(-1)?.band).toBe('resisting');
  });

  test('a sustained mild drop (to 67) also changes the band within the hour', () => {
    // hb 24/300 = 8% → 0.4 × 35 = 14; challenges 36/300 = 12% → 0.6 × 25 = 15; latency 300/200 = 1.5×
    // → 0.25 × 15 = 3.75. 100 - 32.75 = 67.25 → 67.
    const mild: WindowInput = { requests: 300, hardBlocks: 24, challenges: 36, softBlocks: 0, p95LatencyMs: 300 };
    expect(assess({ current: mild, baseline }).health.score).toBe(67);
    const ticks = run([...Array<WindowInput>(10).fill(good), ...Array<WindowInput>(60).fill(mild)]);
    // 67 + 33 × 2^(-t/10) rounds to ≤ 76 once 2^(-t/10) < 9.5/33 → t > 17.96 → minute 18.
    expect(ticks.findIndex((t) => t.band === 'degrading') - 9).toBe(18);
  });

  test('ticks without a score (too few requests) keep the smoothed value and the band', () => {
    const ticks = run([...Array<WindowInput>(5).fill(good), ...Array<WindowInput>(20).fill(tooSmall), good]);
    expect(ticks.map((t) => t.band)).toEqual(Array(26).fill('healthy'));
    expect(ticks.map((t) => t.score)).toEqual(Array(26).fill(100));
  });

  test('a new site without baseline is learning; total refusal still marks it resisting', () => {
    let state: SiteScoringState = INITIAL_SITE_STATE;
    const refuse: WindowInput = { requests: 100, hardBlocks: 100, challenges: 0, softBlocks: 0, p95LatencyMs: 100 };
    const bands: HealthBand[] = [];
    for (const current of [good, refuse, refuse]) {
      const t = advanceSiteState(
        state,
        assess({ current, baseline: null, previousRefusal: state.refusalStreak }),
        MINUTE,
      );
      state = t.state;
      bands.push(t.band);
    }
    expect(bands).toEqual(['learning', 'learning', 'resisting']);
  });
});
