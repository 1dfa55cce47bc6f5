/**
 * A tick's score explained signal by signal, from its stored assessment: each signal's value now, the
 * site's normal (its baseline) with their 95% intervals, the points it cost and whether it is a reason;
 * the refusal rules, routes, canaries, parser health and cost drift. Shared by `target-health explain`
 * (any past tick) and `status` (the latest one). Pure: the reads are the commands'.
 */
import { z } from 'zod';
import { formatCrawlerCanaries } from '../../core/canaries/latest';
import { HEALTH_SIGNALS, EXTRACTION_SIGNALS } from '../../core/scoring/reasons';
import { plural } from '../../core/common/plural';
import type { StoredRateSignal, StoredTick } from './stored-tick';

const interval = z.object({ low: z.number(), high: z.number() });

export const signalRowSchema = z.object({
  signal: z.string(),
  /** `health`: part of the health score; `parser`: of parser health. */
  score: z.enum(['health', 'parser']),
  /** `rate`: a share of requests (extractions for parser signals), 0–1; `p95-ms`: latency in ms. */
  unit: z.enum(['rate', 'p95-ms']),
  now: z.number(),
  /** The site's normal: the same signal over its baseline window. */
  normal: z.number(),
  /** 95% Wilson intervals of the rates (how sure each is, given its volume); null for latency. */
  interval: z.object({ now: interval, normal: interval }).nullable(),
  /** Events and requests behind `now` (rates only). */
  count: z.number().nullable(),
  outOf: z.number().nullable(),
  /** How far above normal it is (rates: now − normal; latency: now / normal − 1). */
  excess: z.number(),
  /** The excess that costs the whole weight (rates: 0.20 = 20 points; latency: a multiple, 3 = three times normal). */
  cap: z.number(),
  weight: z.number(),
  /** Points it took off its score (0 to weight). */
  penalty: z.number(),
  /** Listed among the tick's reasons (a penalty of at least 1 point). */
  reason: z.boolean(),
});
export type SignalRow = z.output<typeof signalRowSchema>;

export const tickExplanationSchema = z.object({
  state: z.enum(['learning', 'insufficient-data', 'scored']),
  score: z.number().nullable(),
  /** 100 minus the penalties, before rounding; null while learning. */
  unrounded: z.number().nullable(),
  penaltyTotal: z.number().nullable(),
  /** Why there is no score, in words; null when scored. */
  noScore: z.string().nullable(),
  window: z.object({
    currentFrom: z.string(),
    currentTo: z.string(),
    baselineFrom: z.string(),
    baselineTo: z.string(),
    /** `healthy-routes`: confirmed failing routes were set aside from the scored window. */
    scope: z.enum(['site', 'healthy-routes']),
    requests: z.object({ current: z.number(), baseline: z.number() }),
    minRequests: z.number().nullable(),
  }),
  signals: z.array(signalRowSchema),
  reasons: z.array(z.string()),
  rules: z.object({
    totalRefusal: z.object({
      fired: z.boolean(),
      /** The current window's refused share. */
      refusedShare: z.number(),
      /**
       * The recent window's (the last few minutes), when it had enough requests; null otherwise or in older
       * assessments.
       */
      recentRefusedShare: z.number().nullable(),
      /** The window whose share made this tick refusing (null: not refusing, or an older assessment). */
      refusingWindow: z.enum(['current', 'recent']).nullable(),
      streak: z.number(),
    }),
    majorityRefusal: z
      .object({ fired: z.boolean(), currentShare: z.number(), normalShare: z.number().nullable(), streak: z.number() })
      .nullable(),
  }),
  routes: z.object({
    verdict: z.string(),
    summary: z.string(),
    /** Confirmed route problems: their traffic is left out of the score. */
    setAside: z.array(z.object({ route: z.string(), failureRate: z.number(), restRate: z.number() })),
    /** Suspects being confirmed (not set aside yet). */
    watched: z.array(z.object({ route: z.string(), ticks: z.number(), confirmTicks: z.number() })),
    /** The band held while watched routes are confirmed: the score without them. */
    hold: z.object({ score: z.number(), band: z.string(), routes: z.array(z.string()) }).nullable(),
  }),
  canary: z.object({ runs: z.number(), failures: z.number(), mismatches: z.number(), mismatch: z.boolean() }),
  /**
   * Canary requests the crawlers sent in the current window, and how many got no normal page; null for ticks assessed
   * before this was kept.
   */
  crawlerCanaries: z.object({ requests: z.number(), failed: z.number() }).nullable(),
  parser: z.object({ score: z.number().nullable(), reasons: z.array(z.string()) }),
  cost: z.object({ status: z.string(), costRatio: z.number(), reasons: z.array(z.string()) }),
});
export type TickExplanation = z.output<typeof tickExplanationSchema>;

function rateRow(
  signal: string,
  score: SignalRow['score'],
  s: StoredRateSignal,
  reasons: readonly string[],
): SignalRow {
  return {
    signal,
    score,
    unit: 'rate',
    now: s.now,
    normal: s.baseline,
    interval: { now: s.interval.now, normal: s.interval.baseline },
    count: s.count,
    outOf: s.outOf,
    excess: s.excess,
    cap: s.cap,
    weight: s.weight,
    penalty: s.penalty,
    reason: reasons.includes(signal),
  };
}

export function explainTick(t: StoredTick): TickExplanation {
  const a = t.assessment;
  const h = a.health.explanation;
  const signals: SignalRow[] = [];
  // While learning there is no normal to compare with: no health signals (the scoring leaves them out).
  if (h !== null) {
    for (const k of HEALTH_SIGNALS) {
      if (k === 'latency') {
        const l = h.signals.latency;
        signals.push({
          signal: k,
          score: 'health',
          unit: 'p95-ms',
          now: l.now,
          normal: l.baseline,
          interval: null,
          count: null,
          outOf: null,
          excess: l.excess,
          cap: l.cap,
          weight: l.weight,
          penalty: l.penalty,
          reason: a.reasons.includes(k),
        });
      } else signals.push(rateRow(k, 'health', h.signals[k], a.reasons));
    }
  }
  if (a.parser.score !== null) {
    for (const k of EXTRACTION_SIGNALS) {
      const s = a.parser.explanation.signals[k];
      if (s !== undefined) signals.push(rateRow(k, 'parser', s, a.parser.reasons));
    }
  }
  const noScore =
    a.state === 'learning'
      ? `learning the baseline: ${a.baseline.detail ?? 'baseline still learning'}`
      : a.state === 'insufficient-data'
        ? `too little current traffic to judge: ${plural(a.health.window.requests, 'request')} in the current ` +
          `window${a.health.scope === 'healthy-routes' ? ' (failing routes set aside)' : ''}, needs ` +
          `${h?.minRequests ?? '?'}`
        : null;
  const m = a.majorityRefusal;
  return {
    state: a.state,
    score: a.health.score,
    unrounded: h?.unrounded ?? null,
    penaltyTotal: h?.penaltyTotal ?? null,
    noScore,
    window: {
      currentFrom: t.window.currentFrom,
      currentTo: t.window.currentTo,
      baselineFrom: t.window.baselineFrom,
      baselineTo: t.window.baselineTo,
      scope: a.health.scope,
      requests: {
        current: h?.requests.current ?? a.health.window.requests,
        baseline: h?.requests.baseline ?? a.baseline.baselineRequests,
      },
      minRequests: h?.minRequests ?? null,
    },
    signals,
    reasons: a.reasons,
    rules: {
      totalRefusal: {
        fired: a.totalRefusal.totalRefusal,
        refusedShare: a.totalRefusal.refusedShare,
        recentRefusedShare: a.totalRefusal.recentRefusedShare ?? null,
        refusingWindow: a.totalRefusal.refusingWindow ?? null,
        streak: a.totalRefusal.streak,
      },
      majorityRefusal:
        m === undefined
          ? null
          : { fired: m.majorityRefusal, currentShare: m.currentShare, normalShare: m.normalShare, streak: m.streak },
    },
    routes: {
      verdict: a.routes.verdict,
      summary: a.routes.summary,
      setAside:
        a.routes.verdict === 'route-specific'
          ? a.routes.suspects.map((s) => ({
              route: `${s.dimension} ${s.value}`,
              failureRate: s.current.rate,
              restRate: s.rest.rate,
            }))
          : [],
      watched: (a.routes.watching ?? []).map((w) => ({
        route: `${w.dimension} ${w.value}`,
        ticks: w.ticks,
        confirmTicks: w.confirmTicks,
      })),
      hold: a.routeHold ?? null,
    },
    canary: {
      runs: a.canary.runs,
      failures: a.canary.failures,
      mismatches: a.canary.mismatches,
      mismatch: a.canary.mismatch,
    },
    crawlerCanaries:
      t.crawlerCanaries === undefined
        ? null
        : { requests: t.crawlerCanaries.requests, failed: t.crawlerCanaries.failed },
    parser: { score: a.parser.score, reasons: a.parser.reasons },
    cost: { status: a.cost.status, costRatio: a.cost.costRatio, reasons: a.cost.reasons },
  };
}

// --- Text ----------------------------------------------------------------------------------------

/** `12.3%`, with more digits for small rates (0.04%), `0%` for exactly none. */
export function percent(x: number): string {
  if (x === 0) return '0%';
  const p = x * 100;
  return `${p >= 10 ? p.toFixed(1) : p >= 0.1 ? p.toFixed(2) : p.toPrecision(1)}%`;
}

const points = (x: number): string => (Math.abs(x) < 0.05 ? '0' : x.toFixed(1));

export function valueCell(row: SignalRow, which: 'now' | 'normal'): string {
  if (row.unit === 'p95-ms') return `p95 ${Math.round(row[which])} ms`;
  const iv = row.interval?.[which];
  const range = iv === undefined ? '' : ` (${percent(iv.low)}–${percent(iv.high)})`;
  const counts = which === 'now' && row.count !== null && row.outOf !== null ? ` ${row.count}/${row.outOf}` : '';
  return `${percent(row[which])}${range}${counts}`;
}

export function effectCell(row: SignalRow): string {
  const cost = row.penalty === 0 ? 'no penalty' : `−${points(row.penalty)} of ${row.weight}`;
  const vs =
    row.unit === 'rate'
      ? `${row.excess >= 0 ? '+' : '−'}${percent(Math.abs(row.excess))}`
      : `×${(row.excess + 1).toFixed(2)}`;
  return `${vs} vs normal, ${cost}${row.reason ? '  ← reason' : ''}`;
}

/** The signals as a table: one line each, now vs normal with intervals, and what each cost. */
export function formatSignals(rows: readonly SignalRow[], indent = '  '): string[] {
  if (rows.length === 0) return [`${indent}— (no normal to compare with yet)`];
  const header = ['SIGNAL', 'NOW (95% interval) COUNT', 'NORMAL (95% interval)', 'EFFECT'];
  const cells = rows.map((r) => [
    `${r.signal}${r.score === 'parser' ? ' (parser)' : ''}`,
    valueCell(r, 'now'),
    valueCell(r, 'normal'),
    effectCell(r),
  ]);
  const widths = header.slice(0, -1).map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]): string =>
    indent +
    c
      .map((x, i) => (i < widths.length ? x.padEnd(widths[i]!) : x))
      .join('  ')
      .trimEnd();
  return [line(header), ...cells.map(line)];
}

/** `no traffic in the window`, and why when the scored window is empty because failing routes were set aside. */
function noTrafficText(e: TickExplanation): string {
  return `no traffic in the window${e.window.scope === 'healthy-routes' ? ' once failing routes are set aside' : ''}`;
}

const noTraffic = (e: TickExplanation): boolean => e.window.requests.current === 0;

/**
 * The tick's signal table, or one line when its window had no traffic: rates of nothing out of nothing
 * (`0% (0%–100.0%) 0/0`) say nothing, and a p95 of no request is no latency.
 */
export function signalLines(e: TickExplanation, indent = '  '): string[] {
  if (e.signals.length > 0 && noTraffic(e)) return [`${indent}— (${noTrafficText(e)})`];
  return formatSignals(e.signals, indent);
}

/**
 * The refused share that made the tick refusing, first: when only the recent window (the last few
 * minutes) refused, the current window's lower share is not what fired the rule.
 */
function refusalShares(t: TickExplanation['rules']['totalRefusal']): string {
  const recent = t.recentRefusedShare === null ? '' : `, recent window ${percent(t.recentRefusedShare)}`;
  if (t.refusingWindow === 'recent' && t.recentRefusedShare !== null)
    return (
      `refused ${percent(t.recentRefusedShare)} in the recent window, ${percent(t.refusedShare)} over the ` +
      `current one`
    );
  return `refused ${percent(t.refusedShare)}${recent}`;
}

/** What the tick counted of the product's canaries, then the crawlers' own canary requests when there were any. */
function canarySentence(e: TickExplanation): string {
  const c = e.canary;
  const own =
    c.runs === 0
      ? 'none counted this tick'
      : `${c.runs} counted, ${c.failures} failed, ${c.mismatches} mismatched${c.mismatch ? ' → canary_mismatch' : ''}`;
  const crawler = e.crawlerCanaries;
  if (crawler === null || crawler.requests === 0) return own;
  return `${own}; ${formatCrawlerCanaries(crawler, { from: e.window.currentFrom, to: e.window.currentTo })}`;
}

/**
 * The route diagnosis in one line, each route said once. The stored summary lists the set-aside and
 * watched routes too (rates rounded to whole percents, as the loop's alerts say them), so beside the
 * structured parts it read as a second, different figure for the same pool; it is shown only when there
 * are no structured parts (site-wide, or too little data: its words are the only ones). `vs` is the
 * other routes of the same window, not the pool's normal.
 */
function routesText(r: TickExplanation['routes']): string {
  const parts: string[] = [];
  if (r.setAside.length > 0) {
    const setAside = r.setAside.map(
      (s) => `${s.route} (${percent(s.failureRate)} failing vs ${percent(s.restRate)} on the other routes)`,
    );
    parts.push(`set aside: ${setAside.join(', ')}`);
  }
  // Too little data to test: the summary says why, and already names the routes still watched.
  if (r.watched.length > 0 && r.verdict !== 'insufficient-data') {
    const watched = r.watched.map((w) => `${w.route} (${w.ticks} of ${plural(w.confirmTicks, 'tick')})`);
    parts.push(`watched: ${watched.join(', ')}`);
  }
  if (r.hold !== null)
    parts.push(`band held: score ${r.hold.score} (${r.hold.band}) without ${r.hold.routes.join(', ')}`);
  return `${r.verdict}: ${parts.length > 0 ? parts.join('; ') : r.summary}`;
}

/** The rules, routes, canaries, parser and cost of a tick, one line each (`label  text`). */
export function formatTickContext(e: TickExplanation): Array<[string, string]> {
  const t = e.rules.totalRefusal;
  const m = e.rules.majorityRefusal;
  // A window without traffic refuses nothing: its shares (0% of 0) are left out.
  const shares = (text: string): string => (noTraffic(e) ? noTrafficText(e) : text);
  const majorityShares = (r: NonNullable<typeof m>): string =>
    shares(`refused ${percent(r.currentShare)}, normal ${r.normalShare === null ? '—' : percent(r.normalShare)}`);
  const rules = [
    `total refusal ${t.fired ? 'FIRED' : 'no'} (${shares(refusalShares(t))}, streak ${t.streak})`,
    m === null
      ? 'majority refusal: not in this assessment'
      : `majority refusal ${m.fired ? 'FIRED' : 'no'} (${majorityShares(m)}, streak ${m.streak})`,
  ].join('; ');
  return [
    ['rules', rules],
    ['routes', routesText(e.routes)],
    ['canaries', canarySentence(e)],
    ['parser', `${e.parser.score ?? '—'}${e.parser.reasons.length > 0 ? ` (${e.parser.reasons.join(', ')})` : ''}`],
    [
      'cost',
      `×${e.cost.costRatio.toFixed(2)} per valid record ` +
        `(${e.cost.status}${e.cost.reasons.length > 0 ? `: ${e.cost.reasons.join(', ')}` : ''})`,
    ],
  ];
}

/** `score 61 = 100 − 39.2 points (hard_block 25.0, latency 14.2)`, or why there is none. */
export function scoreSentence(e: TickExplanation): string {
  if (e.score === null) return `— (${e.noScore ?? 'no score'})`;
  const lost = e.signals
    .filter((s) => s.score === 'health' && s.penalty >= 0.05)
    .map((s) => `${s.signal} ${points(s.penalty)}`);
  return `${e.score} = 100 − ${points(e.penaltyTotal ?? 0)} points${lost.length > 0 ? ` (${lost.join(', ')})` : ''}`;
}
