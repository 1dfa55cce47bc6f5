/**
 * The settings `tune` may move, each within documented bounds and on a grid (pure): what a candidate is, its
 * neighbours one step away, and whether it stays inside the bounds. Bounds are where the product's own
 * reasoning still holds (docs/tuning.md, "The bounds"); the loop's schema (core/control/config.ts) validates every
 * candidate on top of them.
 */
import { type SiteHealthConfig, siteHealthConfigSchema } from '../../core/control/config';
import { formatDuration } from '../../core/common/durations';

const MINUTE = 60_000;

/** A value grid for one setting: the candidate values in order, and why the ends are where they are. */
export interface Dimension {
  /** The settings path, as `configure` and `settings_changes` name it. */
  field: string;
  values: readonly number[];
  why: string;
  get(c: SiteHealthConfig): number;
  set(c: SiteHealthConfig, v: number): SiteHealthConfig;
}

const WEIGHT_KEYS = ['hard_block', 'challenge', 'soft_block', 'latency'] as const;
type WeightKey = (typeof WEIGHT_KEYS)[number];
/** A weight moves by this many points at a time, from one signal to another (they must sum to 100). */
export const WEIGHT_STEP = 5;
export const WEIGHT_MIN = 5;
export const WEIGHT_MAX = 50;

const range = (from: number, to: number, step: number): number[] => {
  const out: number[] = [];
  for (let v = from; v <= to + 1e-9; v += step) out.push(Math.round(v * 100) / 100);
  return out;
};

const scoring = (c: SiteHealthConfig, s: Partial<SiteHealthConfig['scoring']>): SiteHealthConfig => ({
  ...c,
  scoring: { ...c.scoring, ...s },
});

export const DIMENSIONS: readonly Dimension[] = [
  {
    field: 'scoring.majorityRefusal.threshold',
    values: range(0.4, 0.7, 0.1),
    why:
      'below 40 % refused the site still serves most requests: a throttle’s job, not a pause; above 70 % a wall ' +
      'refusing two requests in three would be hammered until the total-refusal rule (90 %)',
    get: (c) => c.scoring.majorityRefusal.threshold,
    set: (c, v) => scoring(c, { majorityRefusal: { ...c.scoring.majorityRefusal, threshold: v } }),
  },
  {
    field: 'scoring.majorityRefusal.consecutiveTicks',
    values: range(1, 5, 1),
    why: 'one tick pauses on a single window; five 1-minute ticks is as long as a wall may be hammered',
    get: (c) => c.scoring.majorityRefusal.consecutiveTicks,
    set: (c, v) => scoring(c, { majorityRefusal: { ...c.scoring.majorityRefusal, consecutiveTicks: v } }),
  },
  {
    field: 'scoring.totalRefusal.consecutiveTicks',
    values: range(1, 5, 1),
    why: 'as for the majority rule: one window to five',
    get: (c) => c.scoring.totalRefusal.consecutiveTicks,
    set: (c, v) => scoring(c, { totalRefusal: { ...c.scoring.totalRefusal, consecutiveTicks: v } }),
  },
  {
    field: 'scoring.bands.healthyMin',
    values: range(70, 90, 5),
    why: 'above 90 ordinary noise throttles; below 70 a third of the weight is lost before anything is done',
    get: (c) => c.scoring.bands.healthyMin,
    set: (c, v) => scoring(c, { bands: { ...c.scoring.bands, healthyMin: v } }),
  },
  {
    field: 'scoring.bands.degradingMin',
    values: range(35, 65, 5),
    why: 'the degrading band keeps at least 10 points of width (hysteresis needs it) within 35–65',
    get: (c) => c.scoring.bands.degradingMin,
    set: (c, v) => scoring(c, { bands: { ...c.scoring.bands, degradingMin: v } }),
  },
  {
    field: 'scoring.smoothing.halfLifeMs',
    values: [2.5 * MINUTE, 5 * MINUTE, 10 * MINUTE, 15 * MINUTE],
    why: 'under 2.5 min one bad minute moves the band; over 15 min a wall waits for the refusal rules alone',
    get: (c) => c.scoring.smoothing.halfLifeMs,
    set: (c, v) => scoring(c, { smoothing: { halfLifeMs: v } }),
  },
  {
    field: 'policy.steps.degradeEveryMs',
    values: [30_000, MINUTE, 2 * MINUTE, 5 * MINUTE],
    why: 'faster than 30 s outruns the crawler obeying; slower than 5 min barely throttles an hour-long incident',
    get: (c) => c.policy.steps.degradeEveryMs,
    set: (c, v) => ({ ...c, policy: { ...c.policy, steps: { ...c.policy.steps, degradeEveryMs: v } } }),
  },
];

export const WEIGHTS_WHY =
  `each health weight stays within ${WEIGHT_MIN}–${WEIGHT_MAX} points (no signal ignored, none the whole score), ` +
  `moved ${WEIGHT_STEP} points at a time from one signal to another so they keep summing to 100`;

/** One move from a candidate to a neighbour: what changed, in words for the proposal. */
export interface Move {
  field: string;
  from: number;
  to: number;
}

export interface Neighbour {
  config: SiteHealthConfig;
  moves: Move[];
}

const weightOf = (c: SiteHealthConfig, k: WeightKey): number => c.scoring.health.weights[k];

/**
 * The candidates one coordinate away from `c`: each dimension at every other grid value, nearest first (a tie in
 * the search keeps the smaller move), and each weight pair shifted one step.
 */
export function neighbours(c: SiteHealthConfig): Neighbour[] {
  const out: Neighbour[] = [];
  for (const d of DIMENSIONS) {
    const v = d.get(c);
    const others = d.values
      .filter((x) => x !== v)
      .map((x, i) => ({ x, i }))
      .sort((a, b) => Math.abs(a.x - v) - Math.abs(b.x - v) || a.x - b.x);
    for (const { x: to } of others) out.push({ config: d.set(c, to), moves: [{ field: d.field, from: v, to }] });
  }
  for (const a of WEIGHT_KEYS)
    for (const b of WEIGHT_KEYS) {
      if (a === b) continue;
      const wa = weightOf(c, a);
      const wb = weightOf(c, b);
      if (wa - WEIGHT_STEP < WEIGHT_MIN || wb + WEIGHT_STEP > WEIGHT_MAX) continue;
      const weights = { ...c.scoring.health.weights, [a]: wa - WEIGHT_STEP, [b]: wb + WEIGHT_STEP };
      out.push({
        config: scoring(c, { health: { ...c.scoring.health, weights } }),
        moves: [
          { field: `scoring.health.weights.${a}`, from: wa, to: wa - WEIGHT_STEP },
          { field: `scoring.health.weights.${b}`, from: wb, to: wb + WEIGHT_STEP },
        ],
      });
    }
  return out.filter((n) => siteHealthConfigSchema().safeParse(n.config).success);
}

/**
 * Why `c` is outside the bounds, or null: every dimension on or between its grid's ends (a current value off the
 * grid is allowed where it was: tune does not move it further out), the weights within theirs.
 */
export function outOfBounds(c: SiteHealthConfig, current: SiteHealthConfig): string | null {
  for (const d of DIMENSIONS) {
    const v = d.get(c);
    const lo = Math.min(d.values[0]!, d.get(current));
    const hi = Math.max(d.values[d.values.length - 1]!, d.get(current));
    if (v < lo || v > hi) return `${d.field} ${v} is outside ${lo}–${hi}`;
  }
  for (const k of WEIGHT_KEYS) {
    const v = weightOf(c, k);
    if (v !== weightOf(current, k) && (v < WEIGHT_MIN || v > WEIGHT_MAX))
      return `scoring.health.weights.${k} ${v} is outside ${WEIGHT_MIN}–${WEIGHT_MAX}`;
  }
  return siteHealthConfigSchema().safeParse(c).success ? null : 'the settings do not validate';
}

/** A stable key for a candidate (memoising its evaluation). */
export function candidateKey(c: SiteHealthConfig): string {
  const w = c.scoring.health.weights;
  return [...DIMENSIONS.map((d) => d.get(c)), w.hard_block, w.challenge, w.soft_block, w.latency].join('/');
}

/** A setting's value as the proposal shows it (`10 min`, `0.4`, `3`). */
export function showValue(field: string, v: number): string {
  return field.endsWith('Ms') ? formatDuration(v) : String(v);
}

/** Every field whose value differs between `a` and `b`, as moves (the weights included). */
export function diff(a: SiteHealthConfig, b: SiteHealthConfig): Move[] {
  const out: Move[] = [];
  for (const d of DIMENSIONS) if (d.get(a) !== d.get(b)) out.push({ field: d.field, from: d.get(a), to: d.get(b) });
  for (const k of WEIGHT_KEYS)
    if (weightOf(a, k) !== weightOf(b, k))
      out.push({ field: `scoring.health.weights.${k}`, from: weightOf(a, k), to: weightOf(b, k) });
  return out;
}

/** The settings patch `configure` takes for these moves, nested like the start input. */
export function patchOf(moves: readonly Move[]): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const m of moves) {
    const path = m.field.split('.');
    let node = root;
    for (const key of path.slice(0, -1)) node = (node[key] ??= {}) as Record<string, unknown>;
    node[path[path.length - 1]!] = m.to;
  }
  return root;
}
