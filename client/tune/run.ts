/**
 * `tune` for one site: gather the labels (client/tune/gather.ts), open one replay span per labelled incident and
 * per quiet day (client/review/replay-span.ts: decisions and windows read once, every candidate replayed over the
 * same ticks from the same warm-up), search the bounded space (client/tune/search.ts), explain each moved setting
 * by the same replays with that setting alone moved, and put the best candidates through the guard rail on the
 * scenario set (client/tune/guard.ts). Writes nothing; `--apply` is the command's (client/commands/tune.ts).
 */
import type { SiteHealthConfig } from '../../core/control/config';
import type { Pool } from '../../server/db/pool';
import { openSpan, type OpenSpan } from '../review/replay-span';
import { warmupMs } from '../review/tune';
import type { RunningSettings } from '../running-settings';
import { gather } from './gather';
import { guardOnScenarios, type GuardResult } from './guard';
import { type Incident, LATE_LOOKBACK_MS, labelled } from './labels';
import { add, compare, EMPTY, type IncidentOutcome, type Scorecard, scoreIncident, scoreQuiet } from './objective';
import type { TuneReport } from './schema';
import { search } from './search';
import { candidateKey, DIMENSIONS, diff, type Move, outOfBounds, patchOf } from './space';
import { explainMove, summaryOf } from './words';

const DAY = 86_400_000;
/** After an incident's end (or the time it is judged at): a restore or a second dip shows in the replays too. */
const AFTER_MS = 15 * 60_000;
/** Fewer labelled incidents than this: not enough evidence to move anything. */
export const MIN_LABELLED = 2;
/** How many of the best candidates the guard rail backtests (one ingest for all). */
export const GUARD_CANDIDATES = 3;

export interface TuneOptions {
  site: string;
  from: number;
  to: number;
  now: number;
  quietDays: number;
  running: () => Promise<RunningSettings>;
  /** A `simulate all --out` directory for the guard rail; default: the set generated for it. */
  scenarios?: string;
  say: (line: string) => void;
}

interface Evaluation {
  card: Scorecard;
  outcomes: IncidentOutcome[];
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** The slowest smoothing the search may try sets every span's warm-up, so all candidates share the same ticks. */
function spanWarmup(current: SiteHealthConfig): number {
  const halfLives = DIMENSIONS.find((d) => d.field === 'scoring.smoothing.halfLifeMs')!.values;
  const slowest = Math.max(current.scoring.smoothing.halfLifeMs, ...halfLives);
  return warmupMs([{ ...current, scoring: { ...current.scoring, smoothing: { halfLifeMs: slowest } } }]);
}

export async function tuneSite(pool: Pool, o: TuneOptions): Promise<TuneReport> {
  const g = await gather(pool, o);
  const tickMs = g.current.tickIntervalMs;
  const scored = labelled(g.incidents);
  const base = {
    site: o.site,
    from: iso(o.from),
    to: iso(o.to),
    tickMs,
    settingsFrom: g.settingsFrom,
    recordFrom: g.recordFrom,
    incidents: g.incidents.map((i) => ({
      from: iso(i.from),
      to: iso(i.to),
      label: i.label,
      judgedAt: iso(i.judgedAt),
      loopPausedAt: i.loopPausedAt === null ? null : iso(i.loopPausedAt),
      because: i.because,
      settingsChangedAfter: i.settingsChangedAfter,
    })),
    quietDays: g.quietDays.map((d) => iso(d).slice(0, 10)),
    search: null,
    current: null,
    proposal: null,
    guard: null,
    applied: null,
  };
  const missing = [
    scored.length < MIN_LABELLED
      ? `${scored.length} labelled incident(s) in the period, at least ${MIN_LABELLED} needed (a decision after ` +
        'a pause, a pause by hand, or a mark: `review --mark`)'
      : null,
    g.quietDays.length === 0
      ? 'no quiet day (a whole UTC day with traffic and no incident) to count false alarms on'
      : null,
  ].filter((x): x is string => x !== null);
  if (missing.length > 0)
    return {
      ...base,
      verdict: { kind: 'not-enough-evidence', text: `not enough evidence to propose a change: ${missing.join('; ')}` },
    };

  const warmup = spanWarmup(g.current);
  o.say(`replaying ${scored.length} labelled incident(s) and ${g.quietDays.length} quiet day(s) per candidate`);
  const incidentSpans: { incident: Incident; span: OpenSpan }[] = [];
  for (const incident of scored)
    incidentSpans.push({
      incident,
      span: await openSpan(pool, {
        site: o.site,
        from: incident.from - LATE_LOOKBACK_MS - warmup,
        to: Math.min(Math.max(incident.to, incident.judgedAt) + AFTER_MS, o.now),
        tickMs,
      }),
    });
  const quietSpans: { day: number; span: OpenSpan }[] = [];
  for (const day of g.quietDays)
    quietSpans.push({ day, span: await openSpan(pool, { site: o.site, from: day - warmup, to: day + DAY, tickMs }) });

  const memo = new Map<string, Evaluation>();
  /** Incidents first; the quiet days only when the incidents leave the candidate a chance to beat `bound`. */
  const evaluate = async (config: SiteHealthConfig, bound: Scorecard | null): Promise<Evaluation | null> => {
    const key = candidateKey(config);
    const known = memo.get(key);
    if (known !== undefined) return known;
    let card = EMPTY;
    const outcomes: IncidentOutcome[] = [];
    for (const { incident, span } of incidentSpans) {
      const r = await span.run(config);
      const out = scoreIncident(incident, r.ticks, tickMs, config.policy, LATE_LOOKBACK_MS);
      outcomes.push(out);
      card = add(card, out.card);
    }
    // Quiet days leave missed and lead as they are and can only add false pauses, flaps and throttled time: a
    // candidate no better than the bound on the incidents alone cannot beat it, so its quiet days are not replayed.
    if (bound !== null && compare(card, bound) >= 0) return null;
    for (const { day, span } of quietSpans) {
      const r = await span.run(config);
      card = add(card, scoreQuiet(r.ticks, { from: day, to: day + DAY }, tickMs, config.policy));
    }
    const e = { card, outcomes };
    memo.set(key, e);
    return e;
  };

  const result = await search(g.current, async (c, bound) => (await evaluate(c, bound))?.card ?? null);
  const current = memo.get(candidateKey(g.current))!;
  const searched = { evaluations: result.evaluations, rounds: result.rounds, better: result.better.length };
  const within = result.better.filter((e) => outOfBounds(e.config, g.current) === null);
  if (within.length === 0)
    return {
      ...base,
      search: searched,
      current: current.card,
      verdict: {
        kind: 'no-change',
        text:
          current.card.missed === 0 && current.card.falsePauses === 0
            ? 'keep the current settings: no candidate within the bounds did better on the labels'
            : 'keep the current settings: no candidate within the bounds did better on the labels; what they got ' +
              'wrong needs more than these settings (docs/tuning.md, "What tune cannot fix")',
      },
    };

  const top = within.slice(0, GUARD_CANDIDATES);
  o.say(`guard rail: backtesting the current settings and ${top.length} candidate(s) on the scenario set`);
  const guard: GuardResult = await guardOnScenarios(
    {
      current: g.current,
      candidates: top.map((e) => e.config),
      ...(o.scenarios === undefined ? {} : { dir: o.scenarios }),
      now: o.now,
    },
    o.say,
  );
  const passing = top.findIndex((_, i) => guard.candidates[i]!.regressions.length === 0);
  const rejected = top
    .slice(0, passing === -1 ? top.length : passing)
    .map((e, i) => ({ changes: diff(g.current, e.config), regressions: guard.candidates[i]!.regressions }));
  const guardOut = { source: guard.source, totalMs: guard.totalMs, rejected };
  if (passing === -1)
    return {
      ...base,
      search: searched,
      current: current.card,
      guard: guardOut,
      verdict: {
        kind: 'rejected',
        text:
          `keep the current settings: the ${top.length} best candidate(s) each broke a scenario of the guard rail ` +
          `(${rejected.map((r) => r.regressions[0]).join('; ')})`,
      },
    };

  const winner = top[passing]!;
  const best = memo.get(candidateKey(winner.config))!;
  const moves = diff(g.current, winner.config);
  const changes: (Move & { why: string })[] = [];
  for (const m of moves) {
    const alone = (await evaluate(aloneConfig(g.current, winner.config, m), null))!;
    changes.push({ ...m, why: explainMove(m, current, alone, scored) });
  }
  const outcomes = scored.flatMap((incident, i) => {
    const before = current.outcomes[i]!;
    const after = best.outcomes[i]!;
    return before.outcome === after.outcome
      ? []
      : [
          {
            incidentFrom: iso(incident.from),
            label: incident.label!,
            before: before.outcome,
            after: after.outcome,
            rightAfter: after.right,
          },
        ];
  });
  const summary = summaryOf(o.site, moves, current.card, best.card, outcomes.length);
  return {
    ...base,
    search: searched,
    current: current.card,
    guard: guardOut,
    proposal: { changes, scorecard: best.card, outcomes, patch: patchOf(moves), summary },
    verdict: { kind: 'propose', text: summary },
  };
}

/** The current settings with only `m` moved (a weight move takes its pair along: they must sum to 100). */
function aloneConfig(current: SiteHealthConfig, winner: SiteHealthConfig, m: Move): SiteHealthConfig {
  if (m.field.startsWith('scoring.health.weights.'))
    return {
      ...current,
      scoring: { ...current.scoring, health: { ...current.scoring.health, weights: winner.scoring.health.weights } },
    };
  return DIMENSIONS.find((x) => x.field === m.field)!.set(current, m.to);
}
