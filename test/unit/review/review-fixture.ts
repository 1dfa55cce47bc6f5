/** An incident review document (client/review/schema.ts) with every section filled: the unit tests' review. */
import { type Review, reviewSchema } from '../../../client/review/schema';

export const span = (requests: number, refusals: number) => ({
  requests,
  refusals,
  rate: requests === 0 ? null : refusals / requests,
  perMinute: requests / 15,
});
const figures = (name: string, first: string | null) => ({
  name,
  description: `${name} settings`,
  firstDegradeAt: first,
  firstPauseAt: null,
  leadMs: 10 * 60_000,
  warnAfterOnsetMs: first === null ? null : Date.parse(first) - Date.parse('2026-11-24T09:55:00.000Z'),
  pauseAfterOnsetMs: null,
  throttledTicks: 20,
  warningTicks: 15,
  notices: 2,
});

export const review: Review = reviewSchema.parse({
  source: { kind: 'stored' },
  site: 'shop.example.com',
  incidentAt: '2026-11-24T10:30:00.000Z',
  window: {
    from: '2026-11-24T10:00:00.000Z',
    to: '2026-11-24T11:00:00.000Z',
    openStart: false,
    openEnd: true,
    durationMs: 3_600_000,
  },
  worstBand: 'resisting',
  ticks: 60,
  refusals: {
    level: 'minute',
    peak: { rate: 0.9, at: '2026-11-24T10:20:00.000Z', reachedAt: '2026-11-24T10:10:00.000Z' },
    during: span(1000, 700),
  },
  early: {
    // The captcha wall of issue 30: 60 % refused from 10:00, past half at 10:01, paused 22 minutes after its onset.
    onset: { at: '2026-11-24T10:00:00.000Z', signal: 'refusals' },
    normal: { refusalShare: 0.01, p95LatencyMs: 420 },
    refusedHalfAt: '2026-11-24T10:01:00.000Z',
    reasons: ['challenge'],
    firstSign: { at: '2026-11-24T10:01:00.000Z', afterOnsetMs: 60_000, afterHalfMs: 0 },
    firstEvidence: { at: '2026-11-24T10:01:00.000Z', afterOnsetMs: 60_000, afterHalfMs: 0 },
    firstDegrade: { at: '2026-11-24T10:00:00.000Z', afterOnsetMs: 0, afterHalfMs: -60_000 },
    firstPause: { at: '2026-11-24T10:22:00.000Z', afterOnsetMs: 22 * 60_000, afterHalfMs: 21 * 60_000 },
    pauseLate: true,
  },
  alerts: [{ at: '2026-11-24T10:05:00.000Z', kind: 'route_alert', text: 'route problem — pool=dc-3' }],
  lead: { firstWarningAt: '2026-11-24T10:00:00.000Z', peakReachedAt: '2026-11-24T10:10:00.000Z', ms: 600_000 },
  timeline: [
    {
      at: '2026-11-24T10:00:00.000Z',
      from: 'healthy',
      to: 'degrading',
      actor: 'control-loop',
      reason: 'score | fell',
      score: 70,
      smoothedScore: 72,
      reasons: ['hard_block'],
      cause: { kind: 'score' },
    },
    {
      at: '2026-11-24T10:20:00.000Z',
      from: 'degrading',
      to: 'resisting',
      actor: 'control-loop',
      reason: 'resisting (score 75, smoothed 95): majority_refusal, challenge',
      score: 75,
      smoothedScore: null,
      reasons: ['majority_refusal', 'challenge'],
      cause: { kind: 'rule', rule: 'majority_refusal' },
    },
  ],
  actions: [
    {
      kind: 'throttle',
      from: '2026-11-24T10:00:00.000Z',
      to: '2026-11-24T10:05:00.000Z',
      steps: 6,
      actor: 'control-loop',
      change: 'concurrency 16→3',
      reason: 'degrading',
      before: span(150, 3),
      after: span(0, 0),
      effect: { obeyed: true, refusals: null, verdict: 'obeyed (requests per minute 10.0 → 0.0)' },
    },
    {
      kind: 'pause',
      from: '2026-11-24T10:22:00.000Z',
      to: '2026-11-24T10:22:00.000Z',
      steps: 1,
      actor: 'control-loop',
      change: 'paused',
      reason: 'resisting',
      before: span(609, 140),
      after: span(717, 430),
      effect: {
        obeyed: false,
        refusals: 'rose',
        verdict: 'NOT OBEYED: requests per minute 40.6 → 47.8 — the crawler did not slow down after the pause',
      },
    },
  ],
  decisions: [],
  canaries: { product: { pass: 0, mismatch: 0, blocked: 0, error: 0 }, crawler: { requests: 0, failed: 0 } },
  chart: { file: 'review-shop.example.com-20261124T1000Z.svg', note: 'the chart' },
  tuning: {
    from: '2026-11-24T09:00:00.000Z',
    to: '2026-11-24T11:15:00.000Z',
    tickMs: 60_000,
    settingsFrom: "the running loop's settings (site-health:shop.example.com)",
    current: figures('current', '2026-11-24T10:00:00.000Z'),
    candidates: [
      {
        ...figures('faster smoothing', '2026-11-24T09:57:00.000Z'),
        differences: 30,
        importantDifferences: 5,
        earlierByMs: 180_000,
        throttledLess: -4,
        noComparison: null,
        quiet: { degrades: 2, pauses: 0, throttledTicks: 30, addedDegrades: 2, addedPauses: 0 },
      },
    ],
    warnedEarliest: 'faster smoothing',
    throttledLeast: null,
    onsetAt: '2026-11-24T09:55:00.000Z',
    incidentFrom: '2026-11-24T09:55:00.000Z',
    quietDays: {
      wanted: 3,
      days: [
        { day: '2026-11-23', judgedBy: 'live', ticks: 1440, scoredTicks: 1440 },
        { day: '2026-11-22', judgedBy: 'replay', ticks: 1440, scoredTicks: 1400 },
      ],
      examined: 7,
      shortfall: '2 of 3 found: 5 whole UTC days with traffic in the 7 before 2026-11-24, of which 3 degraded live',
      tickMs: 60_000,
      current: { degrades: 0, pauses: 0, throttledTicks: 0 },
    },
    headline: {
      kind: 'trade-off',
      candidate: 'faster smoothing',
      text:
        'faster smoothing warned 3 min earlier (2 min after the onset instead of 5 min after the onset), but it ' +
        'would have added 2 false degrades over 2 quiet days (2026-11-23, 2026-11-22): a trade-off to weigh, not a ' +
        'recommendation.',
    },
  },
});
