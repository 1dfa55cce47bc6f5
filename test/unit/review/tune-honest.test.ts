/**
 * Honest tuning, on scripted incidents (constructed replays): a comparison is read only where both replays had
 * settled, so a cold start at the incident (the first, already bad, score becoming the smoothed score) cannot make
 * a headline; a candidate that warns earlier but raises false alarms on quiet days is a trade-off, not a
 * recommendation; the quiet days count moves into a band, inside the day only.
 */
import { quietFigures } from '../../../client/review/quiet-figures';
import type { QuietDays } from '../../../client/review/schema';
import { settleMs, settling } from '../../../client/review/settle';
import { candidateFigures, type Run, runFigures, warnedEarliest } from '../../../client/review/tune-figures';
import { headline } from '../../../client/review/tune-headline';
import { parseSiteHealthInput } from '../../../core/control/config';
import type { HealthBand } from '../../../core/common/names';
import type { ReplayResult } from '../../../tools/replay/types';
import { replayResult, replayTick } from '../../kit/replay-ticks';

const M = 60_000;
const H = 60 * M;
const T0 = Date.parse('2026-11-24T08:00:00Z');
const ONSET = T0 + 2 * H;
const HALF_LIFE = 10 * M;

const parsed = parseSiteHealthInput({ site: 'shop.example.com' });
if (!parsed.ok) throw new Error(parsed.message);
const policy = parsed.value.policy;

/** One tick a minute from T0: its score (null: no score) and band. */
type Step = [score: number | null, band: HealthBand];

function replay(steps: readonly Step[]): ReplayResult {
  const ticks = steps.map(([score, band], i) =>
    replayTick(i + 1, new Date(T0 + i * M).toISOString(), {
      score,
      band,
      reasons: band === 'healthy' ? [] : ['challenge'],
    }),
  );
  return replayResult('shop.example.com', ticks, M);
}

/** Four hours: before the onset `before` (a score, or null: no traffic), then a fall; degrading from `degradeAt`. */
function incident(before: number | null, degradeAt: number): Step[] {
  return Array.from({ length: 240 }, (_, i): Step => {
    const t = T0 + i * M;
    const score = t < ONSET ? before : 85 - (t - ONSET) / M;
    return [score, t >= degradeAt ? 'degrading' : 'healthy'];
  });
}

const marks = { incidentFrom: ONSET, peakReachedAt: ONSET + 30 * M, onsetAt: ONSET };
const run = (name: string, steps: Step[]): Run => {
  const result = replay(steps);
  return { result, figures: runFigures(name, name, result, policy, marks), halfLifeMs: HALF_LIFE };
};
const start = { at: ONSET, what: 'the onset' };

const quietDays = (n: number): QuietDays => ({
  wanted: 3,
  days: Array.from({ length: n }, (_, i) => ({
    day: `2026-11-2${i + 1}`,
    judgedBy: 'replay' as const,
    ticks: 1440,
    scoredTicks: 1440,
  })),
  examined: 3,
  shortfall: n === 3 ? null : `${n} of 3 found`,
  tickMs: M,
  current: { degrades: 0, pauses: 0, throttledTicks: 0 },
});

describe('settling', () => {
  test('six half-lives of scores since the first one: settled; a gap of more than a half-life starts it again', () => {
    const steady = replay(incident(98, ONSET + 10 * M)).ticks;
    expect(settleMs(HALF_LIFE)).toBe(H);
    expect(settling(steady, HALF_LIFE, ONSET, M)).toEqual({ coldStartAt: T0, readAt: ONSET, settled: true });
    expect(settling(steady, HALF_LIFE, T0 + 59 * M, M).settled).toBe(false);
    // Scores until 09:00, then 11 minutes without one: the score after the gap weighs more than half, a cold start.
    const gap = steady.map((t, i) => (i >= 60 && i < 71 ? { ...t, score: null } : t));
    expect(settling(gap, HALF_LIFE, ONSET, M)).toEqual({ coldStartAt: T0 + 71 * M, readAt: ONSET, settled: false });
    // No scores before the onset: the reading is the first score after it, and that is the cold start.
    const cold = replay(incident(null, ONSET + 10 * M)).ticks;
    expect(settling(cold, HALF_LIFE, ONSET, M)).toEqual({ coldStartAt: ONSET, readAt: ONSET, settled: false });
  });
});

describe('a cold-start artefact cannot make a headline', () => {
  // The store has no traffic before the onset. Started cold, the candidate's raised threshold "degrades" on the
  // first score (it is the smoothed score at once) and the current settings an hour later.
  const current = run('current', incident(null, ONSET + H));
  const candidate = run('earlier throttle', incident(null, ONSET));
  const figures = candidateFigures(current, candidate, start, {
    current: { degrades: 0, pauses: 0, throttledTicks: 0 },
    candidate: { degrades: 0, pauses: 0, throttledTicks: 0 },
  });

  test('the candidate is no comparison, said with the time the traffic starts', () => {
    expect(figures.earlierByMs).toBe(H);
    expect(figures.noComparison).toBe(
      'no comparison: the store has no traffic before 2026-11-24 10:00:00Z to settle the smoothing (the current ' +
        "settings' replay's scores start there, at the onset; settling takes 1 h (6 half-lives of 10 min))",
    );
  });

  test('no verdict and no headline but the reason', () => {
    expect(warnedEarliest(current.figures, [figures])).toBeNull();
    const h = headline(current.figures, [figures], quietDays(3));
    expect(h.kind).toBe('no-comparison');
    expect(h.candidate).toBeNull();
    expect(h.text).toMatch(/^no comparison: the store has no traffic before 2026-11-24 10:00:00Z/);
    expect(h.text).not.toMatch(/earlier/);
  });

  test('replayed from well before, the same setting is a comparison: 1 minute earlier, recommended when quiet', () => {
    const settledCurrent = run('current', incident(98, ONSET + 11 * M));
    const settledCandidate = run('earlier throttle', incident(98, ONSET + 10 * M));
    const quiet = { degrades: 0, pauses: 0, throttledTicks: 0 };
    const f = candidateFigures(settledCurrent, settledCandidate, start, { current: quiet, candidate: quiet });
    expect(f.noComparison).toBeNull();
    expect(f.earlierByMs).toBe(M);
    expect(f.warnAfterOnsetMs).toBe(10 * M);
    const h = headline(settledCurrent.figures, [f], quietDays(3));
    expect(h).toEqual({
      kind: 'recommend',
      candidate: 'earlier throttle',
      text:
        'try earlier throttle: it warned 1 min earlier (10 min after the onset instead of 11 min after the onset) ' +
        'and added no false alarm over 3 quiet days (2026-11-21, 2026-11-22, 2026-11-23).',
    });
  });

  test('a first difference before the runs settled is no comparison either, even with traffic before', () => {
    // Traffic from 09:30 only: half an hour of scores before the onset, the smoothing needs an hour.
    const late = (degradeAt: number): Step[] =>
      incident(98, degradeAt).map(([s, b], i): Step => [T0 + i * M < T0 + 90 * M ? null : s, b]);
    const f = candidateFigures(run('current', late(ONSET + 11 * M)), run('c', late(ONSET + 10 * M)), start);
    expect(f.noComparison).toMatch(/^no comparison: the store has no traffic before 2026-11-24 09:30:00Z/);
    expect(f.noComparison).toContain('30 min before the onset');
  });
});

describe('runs that differed before they settled', () => {
  // Scores from 08:00; the runs settle at 09:00. The candidate degrades 08:10–08:20 (its cold start's doing, or not).
  const early = (until: number): Step[] =>
    incident(98, ONSET + 10 * M).map(([sc, b], i): Step => [sc, i >= 10 && i < until ? 'degrading' : b]);
  const current = run('current', incident(98, ONSET + 11 * M));

  test('agree again once settled: a comparison, measured from the onset (an early warning is none)', () => {
    const f = candidateFigures(current, run('c', early(20)), start, null);
    expect(f.noComparison).toBeNull();
    expect(f.firstDegradeAt).toBe(new Date(ONSET + 10 * M).toISOString());
    expect(f.earlierByMs).toBe(M);
  });

  test('still differing when settled: no comparison', () => {
    const f = candidateFigures(current, run('c', early(70)), start, null);
    expect(f.noComparison).toBe(
      'no comparison: the two replays already differed at 2026-11-24 08:10:00Z, before both had settled ' +
        '(2026-11-24 09:00:00Z), and still did then',
    );
  });
});

describe('quiet days decide between a recommendation and a trade-off', () => {
  const current = run('current', incident(98, ONSET + 11 * M));
  const candidate = run('earlier throttle', incident(98, ONSET + 10 * M));
  const quietCurrent = { degrades: 1, pauses: 0, throttledTicks: 12 };

  test('better on the incident but false alarms on quiet days: not recommended, the trade-off said', () => {
    const f = candidateFigures(current, candidate, start, {
      current: quietCurrent,
      candidate: { degrades: 4, pauses: 1, throttledTicks: 90 },
    });
    expect(f.quiet).toEqual({ degrades: 4, pauses: 1, throttledTicks: 90, addedDegrades: 3, addedPauses: 1 });
    const h = headline(current.figures, [f], quietDays(2));
    expect(h.kind).toBe('trade-off');
    expect(h.text).toBe(
      'earlier throttle warned 1 min earlier (10 min after the onset instead of 11 min after the onset), but it ' +
        'would have added 3 false degrades and 1 false pause over 2 quiet days (2026-11-21, 2026-11-22): a ' +
        'trade-off to weigh, not a recommendation.',
    );
  });

  test('a clean candidate is recommended over an earlier one with false alarms', () => {
    const noisy = candidateFigures(current, run('noisy', incident(98, ONSET + 5 * M)), start, {
      current: quietCurrent,
      candidate: { degrades: 2, pauses: 0, throttledTicks: 30 },
    });
    const clean = candidateFigures(current, candidate, start, { current: quietCurrent, candidate: quietCurrent });
    const h = headline(current.figures, [noisy, clean], quietDays(3));
    expect(h.kind).toBe('recommend');
    expect(h.candidate).toBe('earlier throttle');
  });

  test('without quiet days replayed, no recommendation', () => {
    const f = candidateFigures(current, candidate, start, null);
    const h = headline(current.figures, [f], { ...quietDays(0), shortfall: 'skipped with --quiet-days 0' });
    expect(h.kind).toBe('unchecked');
    expect(h.text).toContain('not checked against quiet days (skipped with --quiet-days 0)');
  });

  test('nothing better on the incident: keep the current settings', () => {
    const later = candidateFigures(current, run('later', incident(98, ONSET + 20 * M)), start, null);
    expect(headline(current.figures, [later], quietDays(3)).kind).toBe('none');
  });
});

test('quiet figures: moves into a warning band and pauses inside the day, not the warm-up', () => {
  const day = { from: T0 + H, to: T0 + 2 * H };
  const steps: Step[] = Array.from({ length: 120 }, (_, i): Step => {
    // Degrading in the warm-up and into the day (not a new move), then twice more inside the day.
    const band: HealthBand =
      i >= 50 && i < 65 ? 'degrading' : i >= 80 && i < 85 ? 'resisting' : i >= 100 && i < 102 ? 'degrading' : 'healthy';
    return [90, band];
  });
  const r = replay(steps);
  r.ticks[81] = { ...r.ticks[81]!, controls: { ...pausedControls } };
  r.ticks[82] = { ...r.ticks[82]!, controls: { ...pausedControls } };
  expect(quietFigures(r.ticks, day, policy)).toEqual({ degrades: 2, pauses: 1, throttledTicks: 5 + 5 + 2 });
});

const pausedControls = {
  concurrencyLimit: 16,
  revisitMultiplier: 1,
  paused: true,
  canaryOnly: false,
  effectiveCostMultiplier: 1,
  band: 'resisting' as const,
  reason: 'paused',
};
