/**
 * The backtest's scorecard: how the loop (a replay's ticks) and the reference rules did on one scenario
 * against its truth, and over the whole set. Pure: tools/backtest/run.ts feeds it, tools/backtest/format.ts prints it.
 *
 * Definitions (every time is a tick's `asOf`, or for a rule the whole minute it was evaluated at):
 * - The loop "degrades" on a tick whose band is degrading or resisting (or whose controls are paused),
 *   and "pauses" on a tick whose band is resisting or whose controls are paused.
 * - First degrade / first pause: the first tick at or after the truth's onset on which the loop is
 *   degrading / paused (null when the truth has no onset, or it never happens). A loop already degraded
 *   at onset (by a false degrade) is counted from its first tick at or after onset.
 * - Lead time = truth.hardBlocks50At − first degrade (or first pause): positive means before hard
 *   blocks passed half. Onset to pause = first pause − onset.
 * - A degrade (pause) episode starts on a tick where the loop enters degrading-or-worse (resisting)
 *   from a lower level. It is false when it starts before onset, or the truth has no onset, or the truth
 *   says the loop should not degrade (pause) in this scenario at all.
 * - Route alerts are the ticks' `route_alert` notices with the tick's `failingRoutes`. One is right
 *   when it comes at or after onset, the truth expects a route alert, and a failing route names the
 *   truth's key (`pool=dc-3`) — exactly, or as one part of a single route's key (`country=US/pool=dc-3`).
 *   Every other route alert is spurious.
 * - Parser alerts are `parser_health` notices; expected when at or after onset and the truth expects a
 *   parser alert, false otherwise. "Throttled then": the controls after that tick are below nominal
 *   (concurrency, revisit or cost: core/control/controls.ts isThrottled) or paused, or the band is degrading
 *   or resisting.
 * - Top reason: the reason that weighed most after onset (over all ticks when there is no onset). Each
 *   tick's first reason that names a cause — product rules that head the list whatever the cause
 *   (`total_refusal`, `majority_refusal`) are skipped — gets the tick's weight: 1 + the points by which
 *   the tick's lower score (health or parser) is below 100. The reason with the largest sum is the top
 *   reason (ties: the one first seen). Weighting, not a plain count, because a short incident (one bad
 *   minute: 15 ticks of `hard_block` at score 86) must not be outvoted by a day of one-point noise
 *   (`extraction_empty` at 99), while reasons that cost no points (`route_specific`: the route is set
 *   aside from the score) still count by frequency. Also reported: the same first reason on the
 *   first-degrade tick. It matches when it equals truth.expectedTopReason (not judged when that is null).
 * - Ticks with no score: ticks whose score is null (learning, not enough data, failed).
 * - A reference rule "alerts" at the first evaluation minute at or after onset at which it is firing;
 *   an alert is expected when the truth says the loop should degrade or pause. A firing episode is a
 *   false alarm when it starts before onset, or the truth expects no degrade and no pause.
 */
import { isThrottled, type ActionPolicy } from '../../core/control/controls';
import type { ReplayTick } from '../replay/types';
import type { ScenarioCause, ScenarioTruth } from '../../core/scenarios/truth';
import type { RuleFirings } from './reference-rules';

const MINUTE_MS = 60_000;

export interface RouteAlertScore {
  at: string;
  routes: string[];
  right: boolean;
}

export interface ParserAlertScore {
  at: string;
  /** The site was throttled or paused on that tick. */
  throttled: boolean;
  expected: boolean;
}

export interface LoopScore {
  firstDegradeAt: string | null;
  firstPauseAt: string | null;
  /** first degrade − onset, ms. */
  degradeDelayMs: number | null;
  /** first pause − onset, ms. */
  pauseDelayMs: number | null;
  /** hardBlocks50At − first degrade, ms (positive: before). */
  degradeLeadMs: number | null;
  /** hardBlocks50At − first pause, ms (positive: before). */
  pauseLeadMs: number | null;
  missedDegrade: boolean;
  missedPause: boolean;
  falseDegrades: number;
  falsePauses: number;
  /** When the first false degrade or false pause started. */
  firstFalseAt: string | null;
  routeAlerts: RouteAlertScore[];
  rightRouteAlertAt: string | null;
  routeAlertDelayMs: number | null;
  spuriousRouteAlerts: number;
  missedRouteAlert: boolean;
  parserAlerts: ParserAlertScore[];
  parserAlertAt: string | null;
  parserAlertDelayMs: number | null;
  falseParserAlerts: number;
  /** Parser alerts raised while the site was throttled or paused. */
  parserAlertsWhileThrottled: number;
  missedParserAlert: boolean;
  /** Ticks on which the site was throttled or paused. */
  throttledTicks: number;
  topReason: string | null;
  reasonAtFirstDegrade: string | null;
  /** null: the truth expects no particular reason. */
  topReasonMatches: boolean | null;
  unscoredTicks: number;
}

export interface RuleScore {
  rule: string;
  /** First minute at or after onset at which the rule was firing. */
  alertAt: string | null;
  delayMs: number | null;
  leadMs: number | null;
  expected: boolean;
  missed: boolean;
  falseAlarms: number;
}

export interface ScenarioScore {
  scenario: string;
  site: string;
  cause: ScenarioCause;
  onset: string | null;
  hardBlocks50At: string | null;
  expect: ScenarioTruth['expect'];
  expectedTopReason: string | null;
  ticks: number;
  loop: LoopScore;
  rules: RuleScore[];
}

export interface RuleSummary {
  rule: string;
  /** Scenarios where an alert was expected, and how many of them it caught. */
  expected: number;
  detected: number;
  missed: number;
  falseAlarms: number;
  medianDelayMs: number | null;
  medianLeadMs: number | null;
}

export interface OverallScore {
  scenarios: number;
  missedPauses: number;
  missedDegrades: number;
  falsePauses: number;
  falseDegrades: number;
  spuriousRouteAlerts: number;
  missedRouteAlerts: number;
  falseParserAlerts: number;
  missedParserAlerts: number;
  /** Median over scenarios with a lead (hard blocks pass half and the loop degraded/paused). */
  medianDegradeLeadMs: number | null;
  medianPauseLeadMs: number | null;
  medianPauseDelayMs: number | null;
  topReasonMatches: number;
  topReasonJudged: number;
  unscoredTicks: number;
  /** The loop as an alert (degrade or pause) beside the reference rules, same definitions. */
  loopAsAlert: RuleSummary;
  rules: RuleSummary[];
}

export interface Scorecard {
  scenarios: ScenarioScore[];
  overall: OverallScore;
}

const at = (iso: string): number => Date.parse(iso);
const iso = (ms: number): string => new Date(ms).toISOString();

/** Reason keys of product rules, not causes: they head the reasons whatever refused the requests. */
export const RULE_REASONS: ReadonlySet<string> = new Set(['total_refusal', 'majority_refusal']);

/** A tick's first reason that names a cause, or null. */
export function causeReason(t: ReplayTick): string | null {
  return t.reasons.find((r) => !RULE_REASONS.has(r)) ?? null;
}

/** 0 nothing, 1 degrading (throttled), 2 paused. */
function level(t: ReplayTick): 0 | 1 | 2 {
  if (t.band === 'resisting' || t.controls?.paused === true) return 2;
  if (t.band === 'degrading') return 1;
  return 0;
}

function throttled(t: ReplayTick, policy: ActionPolicy): boolean {
  return level(t) > 0 || (t.controls !== null && isThrottled(t.controls, policy));
}

/** A failing route names the truth's key, exactly or as one part of a single route's `a=x/b=y` key. */
export function routeMatches(failingRoutes: readonly string[], expected: string): boolean {
  return failingRoutes.some((r) => r === expected || r.split('/').includes(expected));
}

export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** The reason whose ticks weigh most (see the header), ties going to the one seen first. */
export function topReasonOf(ticks: readonly ReplayTick[]): string | null {
  const weights = new Map<string, number>();
  for (const t of ticks) {
    const reason = causeReason(t);
    if (reason === null) continue;
    const low = Math.min(t.score ?? 100, t.parserHealth ?? 100);
    weights.set(reason, (weights.get(reason) ?? 0) + 1 + Math.max(0, 100 - low));
  }
  return heaviest(weights);
}

function heaviest(weights: ReadonlyMap<string, number>): string | null {
  let best: string | null = null;
  let bestWeight = 0;
  // Map iteration is insertion order: on a tie the reason seen first stays.
  for (const [reason, weight] of weights) {
    if (weight > bestWeight) {
      best = reason;
      bestWeight = weight;
    }
  }
  return best;
}

export function scoreLoop(truth: ScenarioTruth, ticks: readonly ReplayTick[], policy: ActionPolicy): LoopScore {
  const onset = truth.onset === null ? null : at(truth.onset);
  const hb50 = truth.hardBlocks50At === null ? null : at(truth.hardBlocks50At);
  const afterOnset = (t: ReplayTick) => onset !== null && at(t.asOf) >= onset;
  const diff = (a: number | null, b: number | null) => (a === null || b === null ? null : a - b);

  const firstDegrade = ticks.find((t) => afterOnset(t) && level(t) >= 1);
  const firstPause = ticks.find((t) => afterOnset(t) && level(t) === 2);
  const firstDegradeMs = firstDegrade ? at(firstDegrade.asOf) : null;
  const firstPauseMs = firstPause ? at(firstPause.asOf) : null;

  let falseDegrades = 0;
  let falsePauses = 0;
  let firstFalseAt: string | null = null;
  let previous: 0 | 1 | 2 = 0;
  const routeAlerts: RouteAlertScore[] = [];
  const parserAlerts: ParserAlertScore[] = [];
  let throttledTicks = 0;
  for (const t of ticks) {
    const now = level(t);
    if (now >= 1 && previous === 0 && (!afterOnset(t) || !truth.expect.degrade)) {
      falseDegrades += 1;
      firstFalseAt ??= t.asOf;
    }
    if (now === 2 && previous < 2 && (!afterOnset(t) || !truth.expect.pause)) {
      falsePauses += 1;
      firstFalseAt ??= t.asOf;
    }
    previous = now;
    const isThrottledNow = throttled(t, policy);
    if (isThrottledNow) throttledTicks += 1;
    for (const n of t.notices) {
      if (n.kind === 'route_alert') {
        const right =
          truth.expect.routeAlert !== null && afterOnset(t) && routeMatches(t.failingRoutes, truth.expect.routeAlert);
        routeAlerts.push({ at: t.asOf, routes: [...t.failingRoutes], right });
      } else if (n.kind === 'parser_health') {
        parserAlerts.push({
          at: t.asOf,
          throttled: isThrottledNow,
          expected: truth.expect.parserAlert && afterOnset(t),
        });
      }
    }
  }

  const rightRoute = routeAlerts.find((r) => r.right);
  const parserAlert = parserAlerts.find((p) => p.expected);
  const topReason = topReasonOf(ticks.filter((t) => onset === null || afterOnset(t)));
  return {
    firstDegradeAt: firstDegrade?.asOf ?? null,
    firstPauseAt: firstPause?.asOf ?? null,
    degradeDelayMs: diff(firstDegradeMs, onset),
    pauseDelayMs: diff(firstPauseMs, onset),
    degradeLeadMs: diff(hb50, firstDegradeMs),
    pauseLeadMs: diff(hb50, firstPauseMs),
    missedDegrade: truth.expect.degrade && firstDegrade === undefined,
    missedPause: truth.expect.pause && firstPause === undefined,
    falseDegrades,
    falsePauses,
    firstFalseAt,
    routeAlerts,
    rightRouteAlertAt: rightRoute?.at ?? null,
    routeAlertDelayMs: rightRoute ? diff(at(rightRoute.at), onset) : null,
    spuriousRouteAlerts: routeAlerts.filter((r) => !r.right).length,
    missedRouteAlert: truth.expect.routeAlert !== null && rightRoute === undefined,
    parserAlerts,
    parserAlertAt: parserAlert?.at ?? null,
    parserAlertDelayMs: parserAlert ? diff(at(parserAlert.at), onset) : null,
    falseParserAlerts: parserAlerts.filter((p) => !p.expected).length,
    parserAlertsWhileThrottled: parserAlerts.filter((p) => p.throttled).length,
    missedParserAlert: truth.expect.parserAlert && parserAlert === undefined,
    throttledTicks,
    topReason,
    reasonAtFirstDegrade: firstDegrade ? causeReason(firstDegrade) : null,
    topReasonMatches: truth.expectedTopReason === null ? null : topReason === truth.expectedTopReason,
    unscoredTicks: ticks.filter((t) => t.score === null).length,
  };
}

/** Whether the truth says something should alert: the loop should at least degrade. */
const alertExpected = (truth: ScenarioTruth): boolean =>
  truth.onset !== null && (truth.expect.degrade || truth.expect.pause);

export function scoreRule(truth: ScenarioTruth, firings: RuleFirings): RuleScore {
  const onset = truth.onset === null ? null : at(truth.onset);
  const expected = alertExpected(truth);
  let alertMs: number | null = null;
  let falseAlarms = 0;
  for (const e of firings.episodes) {
    if (onset === null || e.firedAt < onset || !expected) falseAlarms += 1;
    if (onset === null) continue;
    // The first evaluation at or after onset falls on the next whole minute.
    const firstAfter = Math.ceil(onset / MINUTE_MS) * MINUTE_MS;
    const from = Math.max(e.firedAt, firstAfter);
    if (e.clearedAt !== null && e.clearedAt <= from) continue;
    if (alertMs === null || from < alertMs) alertMs = from;
  }
  const hb50 = truth.hardBlocks50At === null ? null : at(truth.hardBlocks50At);
  return {
    rule: firings.rule,
    alertAt: alertMs === null ? null : iso(alertMs),
    delayMs: alertMs === null || onset === null ? null : alertMs - onset,
    leadMs: alertMs === null || hb50 === null ? null : hb50 - alertMs,
    expected,
    missed: expected && alertMs === null,
    falseAlarms,
  };
}

export function scoreScenario(
  truth: ScenarioTruth,
  ticks: readonly ReplayTick[],
  firings: readonly RuleFirings[],
  policy: ActionPolicy,
): ScenarioScore {
  return {
    scenario: truth.scenario,
    site: truth.site,
    cause: truth.cause,
    onset: truth.onset,
    hardBlocks50At: truth.hardBlocks50At,
    expect: truth.expect,
    expectedTopReason: truth.expectedTopReason,
    ticks: ticks.length,
    loop: scoreLoop(truth, ticks, policy),
    rules: firings.map((f) => scoreRule(truth, f)),
  };
}

function summariseAlerts(
  rule: string,
  rows: ReadonlyArray<{ expected: boolean; alertDelayMs: number | null; leadMs: number | null; falseAlarms: number }>,
): RuleSummary {
  const expected = rows.filter((r) => r.expected);
  const detected = expected.filter((r) => r.alertDelayMs !== null);
  return {
    rule,
    expected: expected.length,
    detected: detected.length,
    missed: expected.length - detected.length,
    falseAlarms: rows.reduce((n, r) => n + r.falseAlarms, 0),
    medianDelayMs: median(detected.map((r) => r.alertDelayMs!)),
    medianLeadMs: median(detected.filter((r) => r.leadMs !== null).map((r) => r.leadMs!)),
  };
}

export function summarise(scenarios: readonly ScenarioScore[]): OverallScore {
  const loops = scenarios.map((s) => s.loop);
  const sum = (f: (l: LoopScore) => number) => loops.reduce((n, l) => n + f(l), 0);
  const count = (f: (l: LoopScore) => boolean) => loops.filter(f).length;
  const values = (f: (l: LoopScore) => number | null) => loops.map(f).filter((v): v is number => v !== null);
  const ruleNames = [...new Set(scenarios.flatMap((s) => s.rules.map((r) => r.rule)))];
  return {
    scenarios: scenarios.length,
    missedPauses: count((l) => l.missedPause),
    missedDegrades: count((l) => l.missedDegrade),
    falsePauses: sum((l) => l.falsePauses),
    falseDegrades: sum((l) => l.falseDegrades),
    spuriousRouteAlerts: sum((l) => l.spuriousRouteAlerts),
    missedRouteAlerts: count((l) => l.missedRouteAlert),
    falseParserAlerts: sum((l) => l.falseParserAlerts),
    missedParserAlerts: count((l) => l.missedParserAlert),
    medianDegradeLeadMs: median(values((l) => l.degradeLeadMs)),
    medianPauseLeadMs: median(values((l) => l.pauseLeadMs)),
    medianPauseDelayMs: median(values((l) => l.pauseDelayMs)),
    topReasonMatches: count((l) => l.topReasonMatches === true),
    topReasonJudged: count((l) => l.topReasonMatches !== null),
    unscoredTicks: sum((l) => l.unscoredTicks),
    loopAsAlert: summariseAlerts(
      'loop (degrade)',
      scenarios.map((s) => ({
        expected: s.onset !== null && (s.expect.degrade || s.expect.pause),
        alertDelayMs: s.loop.degradeDelayMs,
        leadMs: s.loop.degradeLeadMs,
        falseAlarms: s.loop.falseDegrades,
      })),
    ),
    rules: ruleNames.map((name) =>
      summariseAlerts(
        name,
        scenarios.flatMap((s) =>
          s.rules
            .filter((r) => r.rule === name)
            .map((r) => ({
              expected: r.expected,
              alertDelayMs: r.delayMs,
              leadMs: r.leadMs,
              falseAlarms: r.falseAlarms,
            })),
        ),
      ),
    ),
  };
}

export function buildScorecard(scenarios: readonly ScenarioScore[]): Scorecard {
  return { scenarios: [...scenarios], overall: summarise(scenarios) };
}
