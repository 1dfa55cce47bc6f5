/**
 * The replay engine: the live loop, tick by tick, over traffic already in the signal store — with the
 * same code, not a copy of it. Each simulated tick calls what the workflow's tick calls:
 *
 *   assessment   activities/assess-site.ts `assessAt` (the same window read from the rollups, the same
 *                scoring), at the tick's time `asOf`, writing nothing;
 *   planning     core/control/plan `planTick` (bands, smoothing, controls, route and parser alerts, the
 *                pause and its reminders), or `planFailedTick` when the data is refused, as live;
 *   decisions    core/control/decisions (validation and gate) and core/control/decide (controls, the state after).
 *
 * Ticks fall on the same grid as the live schedule (core/control/schedule.ts): multiples of the tick
 * interval, so a replay of a live loop's period asks the windows the loop asked. Human decisions come
 * from a file (tools/replay/decisions-file.ts) and are applied at their time, between ticks, as the inbox
 * applies them live. Nothing is written anywhere; the live tables are only read.
 *
 * What replay cannot reproduce: canary fetches (it judges the canary traffic recorded in the store, not
 * new fetches), and a decision's database time (it uses the time given in the file).
 */
import { isDataError } from '../../activities/data-errors';
import { type AssessAtDeps, assessAt } from '../../activities/assess-site';
import type { SiteHealthConfig } from '../../core/control/config';
import { afterDecision, decisionControls } from '../../core/control/decide';
import { decisionNotAllowed } from '../../core/control/decisions';
import { assessmentKey, decisionKey } from '../../core/control/keys';
import { type LoopState, initialLoopState } from '../../core/control/loop-state';
import { type LoopConfig, type TickPlan, planTick } from '../../core/control/plan';
import { assessmentCarry } from '../../core/control/scoring-step';
import { planFailedTick } from '../../core/control/plan/failed';
import type { TickAssessment } from '../../core/control/tick-assessment';
import type { Controls } from '../../core/control/controls';
import { canaryFailedDays, ownCanaryFetches, periodCanaryFetches } from '../../server/db/canaries';
import { loadPeriodWindows } from '../../server/db/signal-store/period-windows';
import { readBaselineWindow, readSiteWindows, windowBounds } from '../../server/db/signal-store/read-windows';
import type { Pool } from '../../server/db/pool';
import { findSite } from '../../server/db/sites';
import type { ReplayDecision } from './decisions-file';
import { summarise } from './summary';
import type { ReplayResult, ReplayTick } from './types';

/** The chain id replays use in their keys (keys are never written; they name the ticks in notices). */
export const REPLAY_CHAIN = 'replay';

export interface ReplayOptions {
  site: string;
  /** Ticks at the grid's slots in [from, to). */
  from: Date;
  to: Date;
  tickMs: number;
  /** Explicit tick times instead of the grid (e.g. the ticks a live loop made), ascending. */
  at?: readonly Date[];
  /** The loop's configuration (core/control/config.ts, parsed: defaults filled). */
  config: SiteHealthConfig;
  /** Human decisions during the period, ascending by time. */
  decisions?: readonly ReplayDecision[];
  /** Each tick as it is made, with what the record of a replay needs beyond it (tools/replay/record.ts). */
  onTick?: (t: ReplayTick, detail: TickDetail) => void;
  /** Each decision as it is applied (or refused), with the controls before and after it. */
  onDecision?: (d: DecisionDetail) => void;
  /** Overrides of the assessment's reads (tests; the benchmark). */
  deps?: Omit<AssessAtDeps, 'pool' | 'runDueCanaries'>;
}

/** What a tick was made of: its assessment (null when the data was refused), its plan, the controls before it. */
export interface TickDetail {
  assessed: TickAssessment | null;
  plan: TickPlan;
  controlsBefore: Controls | null;
}

/** A decision applied between ticks: null `problem` when applied, else why the gate refused it. */
export interface DecisionDetail {
  decision: ReplayDecision;
  decisionKey: string;
  problem: string | null;
  controlsBefore: Controls | null;
  controlsAfter: Controls | null;
}

/** The grid's tick times in [from, to). */
export function tickTimes(from: Date, to: Date, tickMs: number): Date[] {
  const out: Date[] = [];
  for (let t = Math.ceil(from.getTime() / tickMs) * tickMs; t < to.getTime(); t += tickMs) out.push(new Date(t));
  return out;
}

function failingRoutes(t: TickAssessment): string[] {
  const d = t.assessment.routes;
  if (d.verdict !== 'route-specific') return [];
  return d.suspects.map((s) => (s.dimension === 'route' ? s.value : `${s.dimension}=${s.value}`));
}

function record(plan: TickPlan, asOf: Date, t: TickAssessment | null): ReplayTick {
  const s = plan.state;
  const last = s.history[s.history.length - 1]!;
  return {
    tick: s.tick,
    asOf: asOf.toISOString(),
    state: last.state,
    score: last.score,
    smoothedScore: last.smoothedScore,
    band: s.band,
    scoredBand: s.scoredBand,
    parserHealth: last.parserHealth,
    reasons: [...last.reasons],
    routeVerdict: last.routeVerdict,
    failingRoutes: t === null ? [] : failingRoutes(t),
    requests: t === null ? 0 : t.assessment.health.window.requests,
    controls: s.controls,
    change: plan.change?.description ?? null,
    notices: plan.notices.map((n) => ({ kind: n.kind, audience: n.audience, title: n.title })),
    awaitingSince: s.awaiting?.since ?? null,
    decisions: [],
  };
}

/** One decision, applied as the inbox applies it live (gate first; a refused one is reported, not applied). */
function applyDecision(
  state: LoopState,
  d: ReplayDecision,
  seq: number,
  config: LoopConfig & { policy: SiteHealthConfig['policy'] },
): { state: LoopState; said: string; detail: DecisionDetail } {
  const problem = decisionNotAllowed(d.decision.kind, {
    site: config.site,
    band: state.band,
    awaiting: state.awaiting !== null,
    stopped: false,
  });
  const key = decisionKey(config.site, REPLAY_CHAIN, seq);
  const detail = { decision: d, decisionKey: key, problem, controlsBefore: state.controls };
  if (problem !== null)
    return {
      state,
      said: `${d.at} ${d.decision.kind} refused: ${problem}`,
      detail: { ...detail, controlsAfter: state.controls },
    };
  const next = decisionControls(state, d.decision, config.policy);
  const after = afterDecision(state, d.decision, next, { decisionKey: key, via: 'signal', decidedAt: d.at });
  return {
    state: { ...after, decisionSeq: seq },
    said: `${d.at} ${d.decision.kind} by ${d.decision.who}`,
    detail: { ...detail, controlsAfter: after.controls },
  };
}

/**
 * The assessment's slow-moving reads, cached for one replay: the site's registration (read once), the
 * baseline window and the days whose canaries failed (per baseline bounds: they move once an hour).
 * The same queries as live; only the current window is read on every tick.
 */
export function memoisedReads(): Pick<AssessAtDeps, 'findSite' | 'canaryFailedDays' | 'readWindows'> & {
  baseline: typeof readBaselineWindow;
  /** Keeps `days` as the answer of canaryFailedDays for [from, to) (read ahead for many baselines at once). */
  knowFailedDays: (from: Date, to: Date, days: ReturnType<typeof canaryFailedDays>) => void;
} {
  let site: ReturnType<typeof findSite> | undefined;
  type Days = ReturnType<typeof canaryFailedDays>;
  type Baseline = ReturnType<typeof readBaselineWindow>;
  // Keyed by the bounds' epoch ms (nested maps: no key string built per tick).
  const days = new Map<number, Map<number, Days>>();
  const baselines = new Map<number, Map<number, Map<string, Baseline>>>();
  const at = <K, V>(m: Map<K, V>, k: K, make: () => V): V => {
    let v = m.get(k);
    if (v === undefined) {
      v = make();
      m.set(k, v);
    }
    return v;
  };
  const baseline: typeof readBaselineWindow = (pool, name, bounds, excludeDays = []) => {
    const byFrom = at(baselines, bounds.from.getTime(), () => new Map<number, Map<string, Baseline>>());
    const byDays = at(byFrom, bounds.to.getTime(), () => new Map<string, Baseline>());
    return at(byDays, excludeDays.join(','), () => readBaselineWindow(pool, name, bounds, excludeDays));
  };
  const daysFrom = (from: Date): Map<number, Days> => at(days, from.getTime(), () => new Map<number, Days>());
  return {
    baseline,
    readWindows: (pool, name, spec) => readSiteWindows(pool, name, spec, baseline),
    findSite: (pool, name) => (site ??= findSite(pool, name)),
    canaryFailedDays: (pool, name, from, to) =>
      at(daysFrom(from), to.getTime(), () => canaryFailedDays(pool, name, from, to)),
    knowFailedDays: (from, to, known) => {
      daysFrom(from).set(to.getTime(), known);
    },
  };
}

type MemoisedReads = ReturnType<typeof memoisedReads>;

/**
 * Starts reading every baseline the ticks will ask (and its canary-failed days) into `memo` while the period is
 * read, in hour order on AHEAD_LANES connections at most, instead of one after the other as the ticks reach a new
 * hour; the canary-failed days of all of them in one read. The same answers as the ticks' own reads: each tick
 * then finds its baseline ready (or reads it itself, once, if it gets there first). A read that fails fails the
 * tick that awaits it, as it would have without reading ahead.
 */
function readBaselinesAhead(
  pool: Pool,
  site: string,
  times: readonly Date[],
  window: SiteHealthConfig['window'],
  memo: MemoisedReads,
): void {
  const bounds = new Map<number, { from: Date; to: Date }>();
  for (const asOf of times) {
    const b = windowBounds({ asOf, ...window }).baseline;
    if (!bounds.has(b.from.getTime())) bounds.set(b.from.getTime(), b);
  }
  const all = [...bounds.values()];
  if (all.length === 0) return;
  // The failed days of every baseline from one read: a day's verdict counts that whole UTC day's runs
  // (server/db/canaries.ts), so the days touching each baseline, taken from the read of their union, are the
  // ones its own read returns.
  const span = canaryFailedDays(pool, site, all[0]!.from, all[all.length - 1]!.to);
  // Not all at once: a day's two dozen baselines queued together on a small pool (a backtest's scratch database
  // has 4 connections) can keep another read waiting past the pool's 10 s connect timeout under load.
  const lanes: Promise<unknown>[] = new Array<Promise<unknown>>(AHEAD_LANES).fill(span);
  for (const [i, b] of all.entries()) {
    const first = utcDay(b.from.getTime());
    const last = utcDay(b.to.getTime() - 1);
    const days =
      b.to.getTime() > b.from.getTime()
        ? span.then((list) => list.filter((d) => d >= first && d <= last))
        : Promise.resolve([]);
    memo.knowFailedDays(b.from, b.to, days);
    const lane = i % AHEAD_LANES;
    const ready = lanes[lane]!.then(
      () => days,
      () => days,
    ).then((excluded) => memo.baseline(pool, site, b, excluded));
    // Handled where a tick awaits the memoised promises; here only kept from counting as unhandled.
    lanes[lane] = ready.catch(() => undefined);
  }
}

/** How many baseline reads a replay keeps in flight ahead of its ticks. */
const AHEAD_LANES = 2;

/** The UTC date (YYYY-MM-DD) of an epoch-ms time, as canaryFailedDays names days. */
function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/**
 * The period's current windows and the product's canary fetches read once (server/db/signal-store/
 * period-windows.ts): each tick's window is a running sum in memory instead of a statement, with the same
 * answers, validated once at the read — so the assessment scores it without parsing it again, as it does the
 * memoised baseline (validated when read). The baselines and canary-failed days (per baseline: they move
 * hourly) are read ahead into `memo`, alongside.
 */
async function periodReads(
  pool: Pool,
  site: string,
  times: readonly Date[],
  config: SiteHealthConfig,
  memo: MemoisedReads,
): Promise<Pick<AssessAtDeps, 'readWindows' | 'ownCanaryFetches' | 'windowsValidated'>> {
  if (times.length < 2) return {};
  const span = (t: Date): ReturnType<typeof windowBounds>['current'] =>
    windowBounds({ asOf: t, ...config.window }).current;
  const from = span(times[0]!).from;
  const to = span(times[times.length - 1]!).to;
  const read = Promise.all([loadPeriodWindows(pool, site, from, to), periodCanaryFetches(pool, site, from, to)]);
  readBaselinesAhead(pool, site, times, config.window, memo);
  const [windows, fetches] = await read;
  return {
    ...(windows === null
      ? {}
      : {
          windowsValidated: true,
          readWindows: async (p, name, spec) => {
            const bounds = windowBounds(spec);
            const current = windows.current(bounds.current, bounds.recent.from);
            if (current === null) return memo.readWindows!(p, name, spec);
            const baseline = await memo.baseline(p, name, bounds.baseline, spec.excludeDays ?? []);
            return { site: name, current, baseline, bounds };
          },
        }),
    ownCanaryFetches: (q, name, a, b) => {
      const counted = fetches(a, b);
      return counted === null ? ownCanaryFetches(q, name, a, b) : Promise.resolve(counted);
    },
  };
}

/** What a replay reads through, shareable by several replays of the same ticks (ReplayOptions.deps). */
export type ReplayReads = NonNullable<ReplayOptions['deps']>;

/**
 * The reads of a replay over `times` — the period read once and summed in memory, the baselines read ahead — for
 * several replays of the same ticks under different settings (`tune`, `review`'s candidates): they ask the same
 * windows, so the reads are made once and every run after the first costs its scoring only. The windows answer for
 * any bounds inside the period (a resume's gate, another window length); outside it they are read per tick. The
 * replays that share them run one after another (the running sums move with each tick).
 */
export async function replayReads(
  pool: Pool,
  site: string,
  times: readonly Date[],
  config: SiteHealthConfig,
): Promise<ReplayReads> {
  const memo = memoisedReads();
  return { ...memo, ...(await periodReads(pool, site, times, config, memo)) };
}

export async function replaySite(pool: Pool, opts: ReplayOptions): Promise<ReplayResult> {
  const { site, config } = opts;
  const loopConfig: LoopConfig = {
    site,
    policy: config.policy,
    scoring: config.scoring,
    tickIntervalMs: opts.tickMs,
  };
  const times = opts.at ?? tickTimes(opts.from, opts.to, opts.tickMs);
  const decisions = [...(opts.decisions ?? [])];
  const deps: AssessAtDeps = {
    pool,
    ...(opts.deps?.readWindows === undefined ? await replayReads(pool, site, times, config) : memoisedReads()),
    ...opts.deps,
  };
  let state = initialLoopState(REPLAY_CHAIN);
  let seq = 0;
  let stopped = false;
  const ticks: ReplayTick[] = [];
  let pendingSaid: string[] = [];

  for (const [i, asOf] of times.entries()) {
    // Decisions made up to this tick's time were applied before it, as the inbox applies them live.
    while (decisions.length > 0 && Date.parse(decisions[0]!.at) <= asOf.getTime() && !stopped) {
      const d = decisions.shift()!;
      seq += 1;
      const applied = applyDecision(state, d, seq, loopConfig);
      state = applied.state;
      pendingSaid.push(applied.said);
      opts.onDecision?.(applied.detail);
      if (d.decision.kind === 'stop' && !applied.said.includes('refused')) stopped = true;
    }
    if (stopped) break;
    const tick = state.tick + 1;
    const controlsBefore = state.controls;
    const nextTickAt = new Date((times[i + 1] ?? new Date(asOf.getTime() + opts.tickMs)).getTime()).toISOString();
    state = { ...state, nextTickAt };
    let plan: TickPlan;
    let t: TickAssessment | null = null;
    try {
      const result = await assessAt(deps, {
        site,
        asOf,
        window: config.window,
        scoring: config.scoring,
        // As the workflow hands them over: the assessment's result then carries the scoring step a live row stores.
        ...assessmentCarry(state),
        evidenceSince: state.evidenceSince,
      });
      t = { assessmentKey: assessmentKey(site, REPLAY_CHAIN, tick), tick, assessedAt: asOf.toISOString(), ...result };
      plan = planTick(state, t, loopConfig);
    } catch (err) {
      // As live: data the assessment refuses makes a failed tick (activities/data-errors.ts), not a crash.
      if (!isDataError(err)) throw err;
      plan = planFailedTick(state, { tick, at: asOf.toISOString(), message: err.message }, loopConfig);
    }
    state = plan.state;
    const out = record(plan, asOf, t);
    out.decisions.push(...pendingSaid);
    pendingSaid = [];
    ticks.push(out);
    opts.onTick?.(out, { assessed: t, plan, controlsBefore });
  }
  return { ticks, summary: summarise(site, opts, times, ticks) };
}
