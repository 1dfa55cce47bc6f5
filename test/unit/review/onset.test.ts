/**
 * The first review question from the onset, on scripted incidents built by hand: a captcha wall paused late, a
 * tarpit whose two hours of slowness come before any refusal, a blip hours before that is not the onset.
 */
import type { IncidentWindow } from '../../../client/review/find-incident';
import {
  earlyFacts,
  findOnset,
  firstEvidence,
  milestone,
  normalAt,
  pauseLate,
  refusedHalfAt,
  signalReasons,
} from '../../../client/review/onset';
import type { BandChangeRow } from '../../../client/review/schema';
import type { Controls } from '../../../core/control/controls';
import { change, M, NOMINAL as controls, T0 } from '../../kit/review-changes';
import type { DayBaseline, RateBucket } from '../../../tools/charts/types';

const DAY0 = Date.parse('2026-11-24T00:00:00Z');
const baseline: DayBaseline[] = [
  { day: DAY0, hardBlockRate: 0.004, challengeRate: 0.005, softBlockRate: 0.001, p95LatencyMs: 400 },
];
const normal = normalAt(baseline, T0);

/** 40 requests a minute from `from` to `to` (minutes from T0); `shape` says what each minute got. */
function minutes(
  from: number,
  to: number,
  shape: (m: number) => { refused?: number; p95?: number; requests?: number },
): RateBucket[] {
  return Array.from({ length: to - from }, (_, k) => {
    const m = from + k;
    const s = shape(m);
    return {
      t: T0 + m * M,
      requests: s.requests ?? 40,
      hardBlocks: 0,
      challenges: s.refused ?? 0,
      softBlocks: 0,
      errors: 0,
      p95LatencyMs: s.p95 ?? 400,
    };
  });
}

const bandRow = (minute: number, from: Controls, to: Controls, reasons: string[]): BandChangeRow => ({
  at: new Date(T0 + minute * M).toISOString(),
  from: from.band,
  to: to.band,
  actor: 'control-loop',
  reason: to.reason,
  score: 60,
  smoothedScore: 62,
  reasons,
  cause: { kind: 'score' },
});

test("normalAt: the day's baseline, refusals summed; none before the first day", () => {
  expect(normal.refusalShare).toBeCloseTo(0.01, 12);
  expect(normal.p95LatencyMs).toBe(400);
  expect(normalAt(baseline, DAY0 - 1)).toEqual({ refusalShare: null, p95LatencyMs: null });
});

describe('a 60 % captcha wall from 12:00, paused 22 minutes after its onset', () => {
  const buckets = minutes(-180, 60, (m) => ({ refused: m >= 0 ? 24 : 0 }));
  const degrading: Controls = { ...controls, band: 'degrading', concurrencyLimit: 8, reason: 'degrading' };
  const paused: Controls = { ...degrading, band: 'resisting', paused: true, canaryOnly: true, reason: 'resisting' };
  const window: IncidentWindow = {
    anchor: T0 + 3 * M,
    from: T0 + 3 * M,
    to: T0 + 50 * M,
    openStart: false,
    openEnd: false,
    worst: 'resisting',
  };
  const changes = [change(3, controls, degrading), change(22, degrading, paused)];
  const timeline = [
    bandRow(3, controls, degrading, ['challenge']),
    bandRow(22, degrading, paused, ['majority_refusal', 'challenge']),
  ];
  // One tick a minute: nothing before the wall, challenge from 12:02.
  const ticks = Array.from({ length: 200 }, (_, k) => ({
    at: T0 + (k - 150) * M,
    reasons: k - 150 >= 2 ? ['challenge'] : [],
  }));

  test("the onset is the wall's first minute; refusals passed half when 5 minutes were past 50 %", () => {
    expect(findOnset(buckets, T0 + 3 * M, window.to, M, normal)).toEqual({ at: T0, signal: 'refusals' });
    // 12:03 holds 4 minutes of 60 % and one normal: 48 %; 12:04 is the first at 60 %.
    expect(refusedHalfAt(buckets, T0, window.to, M)).toBe(T0 + 4 * M);
  });

  test('the pause reads 22 min after the onset and late; the evidence and the degrade against both', () => {
    const e = earlyFacts({ window, buckets, bucketMs: M, baselines: baseline, timeline, changes, ticks });
    expect(e.onset).toEqual({ at: new Date(T0).toISOString(), signal: 'refusals' });
    expect(e.refusedHalfAt).toBe(new Date(T0 + 4 * M).toISOString());
    expect(e.reasons).toEqual(['challenge']);
    expect(e.firstSign).toEqual({ at: new Date(T0 + 2 * M).toISOString(), afterOnsetMs: 2 * M, afterHalfMs: -2 * M });
    expect(e.firstEvidence).toEqual(e.firstSign);
    expect(e.firstDegrade).toEqual({ at: new Date(T0 + 3 * M).toISOString(), afterOnsetMs: 3 * M, afterHalfMs: -M });
    expect(e.firstPause).toEqual({
      at: new Date(T0 + 22 * M).toISOString(),
      afterOnsetMs: 22 * M,
      afterHalfMs: 18 * M,
    });
    expect(e.pauseLate).toBe(true);
  });

  test('the same wall paused at 12:07 is on time', () => {
    const early = [change(3, controls, degrading), change(7, degrading, paused)];
    const e = earlyFacts({ window, buckets, bucketMs: M, baselines: baseline, timeline, changes: early, ticks });
    expect(e.firstPause!.afterOnsetMs).toBe(7 * M);
    expect(e.pauseLate).toBe(false);
  });
});

describe('a tarpit: p95 ×4.5 for two hours (score 85, healthy), then 75 % hard blocks', () => {
  const buckets = minutes(-180, 180, (m) => ({
    p95: m >= 0 ? 1800 : 400,
    refused: m >= 120 ? 30 : 0,
  }));
  const warnAt = 125;
  test('the onset is the first slow minute, two hours before the first warning', () => {
    expect(findOnset(buckets, T0 + warnAt * M, T0 + 170 * M, M, normal)).toEqual({ at: T0, signal: 'latency' });
  });
  test('the first sign is the first tick naming latency, long before the warning', () => {
    const ticks = Array.from({ length: 180 }, (_, m) => ({
      at: T0 + m * M,
      reasons: m >= 120 ? ['hard_block', 'latency'] : m >= 4 ? ['latency'] : [],
    }));
    expect(firstEvidence(ticks, ['hard_block', 'latency'], T0)).toEqual({ sign: T0 + 4 * M, evidence: T0 + 120 * M });
  });
});

test('a blip hours before is not the onset: more than 10 quiet minutes separate it from the incident', () => {
  const buckets = minutes(-240, 60, (m) => ({ refused: (m >= -200 && m < -190) || m >= 0 ? 30 : 0 }));
  expect(findOnset(buckets, T0 + 5 * M, T0 + 60 * M, M, normal)!.at).toBe(T0);
  // Gaps up to 10 minutes do not end the stretch: a lull of 8 minutes inside the wall keeps the earlier onset.
  const lull = minutes(-60, 60, (m) => ({ refused: m >= -30 && !(m >= -15 && m < -7) ? 30 : 0 }));
  expect(findOnset(lull, T0, T0 + 60 * M, M, normal)!.at).toBe(T0 - 30 * M);
});

test('no onset when the traffic never left normal; too few requests are not judged', () => {
  expect(
    findOnset(
      minutes(-60, 60, () => ({})),
      T0,
      T0 + 60 * M,
      M,
      normal,
    ),
  ).toBeNull();
  const thin = minutes(-60, 60, () => ({ requests: 2, refused: 2 }));
  expect(findOnset(thin, T0, T0 + 60 * M, M, normal)).toBeNull();
});

test('the reasons that count as evidence, milestones and lateness', () => {
  expect(signalReasons(['majority_refusal', 'challenge', 'soft_block', 'route_specific'])).toEqual([
    'challenge',
    'soft_block',
  ]);
  expect(firstEvidence([{ at: 1, reasons: ['challenge'] }], [], 0)).toEqual({ sign: null, evidence: null });
  expect(milestone(null, 0, 0)).toBeNull();
  expect(milestone(T0, null, null)).toEqual({ at: new Date(T0).toISOString(), afterOnsetMs: null, afterHalfMs: null });
  expect(pauseLate({ at: '', afterOnsetMs: 30 * M, afterHalfMs: null })).toBe(false);
  expect(pauseLate({ at: '', afterOnsetMs: 30 * M, afterHalfMs: 5 * M + 1 })).toBe(true);
});
