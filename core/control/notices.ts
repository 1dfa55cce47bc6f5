/**
 * What the loop tells people, built in the workflow (pure) from its state and the tick's assessment:
 * a short title and text for a chat line, and the evidence a person needs to decide — score, smoothed
 * score, reasons, each signal against the site's baseline, the route diagnosis and the recent history.
 * The activity adds the recipient and the link to the run, then queues it in the outbox.
 */
import { formatCanaryEvidence, formatCrawlerCanaries } from '../canaries/latest';
import type { HealthBand } from '../common/names';
import { bandPhrase, scoresText } from './band-wording';
import type { TickAssessment } from './tick-assessment';
import type { Controls } from './controls';
import type { LoopState, TickSummary } from './loop-state';

export const NOTICE_KINDS = [
  'degrading',
  'resisting',
  'reminder',
  'parser_health',
  'route_alert',
  'paused',
  'resumed',
  'stopped',
  'assessment_failed',
] as const;
export type NoticeKind = (typeof NOTICE_KINDS)[number];
export type Severity = 'info' | 'warning' | 'critical';
/** Who gets it: the site's owner (hostility, decisions) or the parser's owner (extraction). */
export type Audience = 'owner' | 'parser_owner';

export interface SignalEvidence {
  signal: string;
  /** `rate`: share of requests (or extractions); `ms`: p95 latency. */
  unit: 'rate' | 'ms';
  now: number;
  baseline: number;
  /** Points this signal costs the score (0 when no worse than baseline). */
  penalty: number;
}

export interface RouteEvidence {
  verdict: string;
  summary: string;
  suspects: Array<{ dimension: string; value: string; requests: number; rate: number; restRate: number }>;
}

export interface Evidence {
  tick: number;
  assessedAt: string | null;
  assessmentKey: string | null;
  score: number | null;
  smoothedScore: number | null;
  band: HealthBand;
  scoredBand: HealthBand;
  parserHealth: number | null;
  reasons: string[];
  signals: SignalEvidence[];
  routes: RouteEvidence | null;
  totalRefusal: { refusedShare: number; streak: number } | null;
  requests: { current: number; baseline: number } | null;
  controls: Controls | null;
  awaitingSince: string | null;
  recentHistory: TickSummary[];
  /**
   * The latest canary results, one line each, most serious first, then the crawlers' canary requests (empty without
   * either).
   */
  canaries: string[];
}

export interface NoticeDraft {
  kind: NoticeKind;
  severity: Severity;
  audience: Audience;
  title: string;
  text: string;
  evidence: Evidence;
}

/** Ticks of history a notification carries. */
export const EVIDENCE_HISTORY = 10;

const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;

export function signalEvidence(a: TickAssessment['assessment']): SignalEvidence[] {
  const out: SignalEvidence[] = [];
  const h = a.health.explanation;
  if (h) {
    for (const key of ['hard_block', 'challenge', 'soft_block'] as const) {
      const s = h.signals[key];
      out.push({ signal: key, unit: 'rate', now: s.now, baseline: s.baseline, penalty: s.penalty });
    }
    const l = h.signals.latency;
    out.push({ signal: 'latency', unit: 'ms', now: l.now, baseline: l.baseline, penalty: l.penalty });
  }
  if (a.parser.score !== null) {
    for (const [key, s] of Object.entries(a.parser.explanation.signals))
      out.push({ signal: key, unit: 'rate', now: s.now, baseline: s.baseline, penalty: s.penalty });
  }
  return out;
}

export function routeEvidence(a: TickAssessment['assessment']): RouteEvidence {
  return {
    verdict: a.routes.verdict,
    summary: a.routes.summary,
    suspects: a.routes.suspects.map((s) => ({
      dimension: s.dimension,
      value: s.value,
      requests: s.current.requests,
      rate: s.current.rate,
      restRate: s.rest.rate,
    })),
  };
}

/**
 * The product's canaries, one line each (most serious first), then the crawlers' own canary requests of
 * the current window when they sent any (`CRAWLER 97 canary requests from the crawler 11:48–11:58Z: …`).
 */
export function canaryLines(t: TickAssessment | null): string[] {
  if (t === null) return [];
  const own = t.canaries ? t.canaries.evidence.map(formatCanaryEvidence) : [];
  const crawler = t.crawlerCanaries;
  if (crawler === undefined || crawler.requests === 0) return own;
  return [...own, `CRAWLER ${formatCrawlerCanaries(crawler, { from: t.window.currentFrom, to: t.window.currentTo })}`];
}

export function buildEvidence(state: LoopState, t: TickAssessment | null): Evidence {
  const a = t?.assessment;
  return {
    tick: state.tick,
    assessedAt: state.lastAssessedAt,
    assessmentKey: state.lastAssessmentKey,
    score: state.score,
    smoothedScore: state.smoothedScore,
    band: state.band,
    scoredBand: state.scoredBand,
    parserHealth: state.parserHealth,
    reasons: state.reasons,
    signals: a ? signalEvidence(a) : [],
    routes: a ? routeEvidence(a) : null,
    totalRefusal: a ? { refusedShare: a.totalRefusal.refusedShare, streak: a.totalRefusal.streak } : null,
    requests: a ? { current: a.health.window.requests, baseline: a.baseline.baselineRequests } : null,
    controls: state.controls,
    awaitingSince: state.awaiting?.since ?? null,
    recentHistory: state.history.slice(-EVIDENCE_HISTORY),
    canaries: canaryLines(t),
  };
}

/** `hard_block 25.0% (normal 0.5%), challenge …` — the signals that cost points, worst first. */
export function describeSignals(signals: readonly SignalEvidence[]): string {
  const costly = signals.filter((s) => s.penalty >= 1).sort((x, y) => y.penalty - x.penalty);
  if (costly.length === 0) return 'no signal above its normal';
  return costly
    .map((s) =>
      s.unit === 'ms'
        ? `${s.signal} p95 ${Math.round(s.now)} ms (normal ${Math.round(s.baseline)} ms)`
        : `${s.signal} ${pct(s.now)} (normal ${pct(s.baseline)})`,
    )
    .join(', ');
}

/** `score 61, smoothed 66` (core/control/band-wording.ts). */
export function scoreLine(e: Evidence): string {
  return scoresText(e.score, e.smoothedScore);
}

/** `resisting: paused by the majority-refusal rule; score 75, smoothed 95` — the band as every surface words it. */
export function bandLine(e: Evidence): string {
  return bandPhrase({ band: e.band, reasons: e.reasons, score: e.score, smoothedScore: e.smoothedScore });
}
