import {
  builtInCandidates,
  candidateFigures,
  runFigures,
  throttledLeast,
  warnedEarliest,
} from '../../../client/review/tune-figures';
import { parseSiteHealthInput, type SiteHealthConfig } from '../../../core/control/config';
import type { Controls } from '../../../core/control/controls';
import type { ReplayResult, ReplayTick } from '../../../tools/replay/types';
import type { HealthBand } from '../../../core/common/names';

const M = 60_000;
const T0 = Date.parse('2026-11-24T12:00:00Z');

function config(): SiteHealthConfig {
  const parsed = parseSiteHealthInput({ site: 'shop.example.com' });
  if (!parsed.ok) throw new Error(parsed.message);
  const { carried: _c, ...c } = parsed.value;
  return c;
}

const controls = (band: HealthBand, concurrencyLimit: number): Controls => ({
  concurrencyLimit,
  revisitMultiplier: 1,
  paused: band === 'resisting',
  canaryOnly: false,
  effectiveCostMultiplier: 1,
  band,
  reason: band,
});

/** A replay whose ticks have these bands (and controls below nominal while not healthy, back to 16 after a while). */
function result(
  bands: HealthBand[],
  concurrency: number[] = bands.map((b) => (b === 'healthy' ? 16 : 8)),
): ReplayResult {
  const ticks: ReplayTick[] = bands.map((band, i) => ({
    tick: i + 1,
    asOf: new Date(T0 + i * M).toISOString(),
    state: 'scored',
    score: 90,
    smoothedScore: 90,
    band,
    scoredBand: band,
    parserHealth: null,
    reasons: [],
    routeVerdict: 'none',
    failingRoutes: [],
    requests: 100,
    controls: controls(band, concurrency[i]!),
    change: null,
    notices: band === 'healthy' ? [] : [{ kind: 'degrading', audience: 'owner', title: 'x' }],
    awaitingSince: null,
    decisions: [],
  }));
  const first = ticks.find((t) => t.band !== 'healthy');
  return {
    ticks,
    summary: {
      site: 'shop.example.com',
      from: ticks[0]!.asOf,
      to: ticks[ticks.length - 1]!.asOf,
      tickMs: M,
      ticks: ticks.length,
      timeInBand: { learning: 0, healthy: 0, degrading: 0, resisting: 0, stopped: 0 },
      firstDegradeAt: first?.asOf ?? null,
      firstPauseAt: null,
      notices: { degrading: ticks.filter((t) => t.notices.length > 0).length },
      unscoredTicks: 0,
    },
  };
}

test(
  'builtInCandidates: the half-life halved, the healthy threshold raised by 5; ' + 'the rest of the settings kept',
  () => {
    const c = config();
    const [faster, earlier] = builtInCandidates(c);
    expect(faster!.config.scoring.smoothing.halfLifeMs).toBe(c.scoring.smoothing.halfLifeMs / 2);
    expect(faster!.config.scoring.bands).toEqual(c.scoring.bands);
    expect(earlier!.config.scoring.bands.healthyMin).toBe(c.scoring.bands.healthyMin + 5);
    expect(earlier!.config.policy).toBe(c.policy);
    expect(earlier!.description).toContain('{"scoring": {"bands": {"healthyMin": 85}}}');
    const high = { ...c, scoring: { ...c.scoring, bands: { ...c.scoring.bands, healthyMin: 97 } } };
    expect(builtInCandidates(high).map((x) => x.name)).toEqual(['faster smoothing']);
  },
);

test(
  'runFigures and candidateFigures: first warning, lead before the peak, throttled ticks (below nominal counts), ' +
    'differences',
  () => {
    const c = config();
    const peak = T0 + 6 * M;
    const current = result(
      ['healthy', 'healthy', 'healthy', 'degrading', 'degrading', 'healthy', 'healthy'],
      [16, 16, 16, 8, 8, 12, 16],
    );
    const cand = result(
      ['healthy', 'degrading', 'degrading', 'degrading', 'healthy', 'healthy', 'healthy'],
      [16, 12, 8, 8, 16, 16, 16],
    );
    const a = runFigures('current', 'current settings', current, c.policy, {
      incidentFrom: T0,
      peakReachedAt: peak,
      onsetAt: T0 + M,
    });
    expect(a).toEqual({
      name: 'current',
      description: 'current settings',
      firstDegradeAt: new Date(T0 + 3 * M).toISOString(),
      firstPauseAt: null,
      leadMs: 3 * M,
      warnAfterOnsetMs: 2 * M,
      pauseAfterOnsetMs: null,
      throttledTicks: 3,
      warningTicks: 2,
      notices: 2,
    });
    const marks = { incidentFrom: T0, peakReachedAt: peak, onsetAt: T0 + M };
    // Settling is the next tests' subject: a half-life of a second settles in six.
    const b = candidateFigures(
      { result: current, figures: a, halfLifeMs: 1000 },
      { result: cand, figures: runFigures('faster', 'x', cand, c.policy, marks), halfLifeMs: 1000 },
      { at: T0 + M, what: 'the onset' },
    );
    expect(b.noComparison).toBeNull();
    expect(b.quiet).toBeNull();
    expect(b.earlierByMs).toBe(2 * M);
    expect(b.throttledLess).toBe(0);
    expect(b.leadMs).toBe(5 * M);
    // Ticks 2, 3 and 5 differ in band and notices; tick 6 only in its controls, which `replay --compare`
    // compares through their changes (none here), so it is not a difference.
    expect(b.importantDifferences).toBe(3);
    expect(b.differences).toBe(3);
    expect(warnedEarliest(a, [b])).toBe('faster');
    expect(throttledLeast([b])).toBeNull();
    expect(
      throttledLeast([
        { ...b, throttledLess: 2 },
        { ...b, name: 'other', throttledLess: 5 },
      ]),
    ).toBe('other');
    const never = runFigures('none', 'x', result(['healthy', 'healthy']), c.policy, {
      incidentFrom: T0,
      peakReachedAt: null,
      onsetAt: null,
    });
    expect(never.leadMs).toBeNull();
    expect(warnedEarliest(never, [b])).toBe('faster');
    expect(warnedEarliest(a, [{ ...b, earlierByMs: -M }])).toBeNull();
  },
);

test('a half-life that is no whole minute is said exactly: 90 s halved is 45 s, not "2 min" and "1 min"', () => {
  const c = config();
  const odd = { ...c, scoring: { ...c.scoring, smoothing: { halfLifeMs: 90_000 } } };
  expect(builtInCandidates(odd)[0]!.description).toBe(
    'smoothing half-life 45 s (current 1 min 30 s): {"scoring": {"smoothing": {"halfLifeMs": 45000}}}',
  );
});
