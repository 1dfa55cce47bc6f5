/**
 * `target-health history`, the pure part: a site's ticks (stored assessments) put together with the
 * control changes and decisions of the same range, the band carried from change to change, rows
 * aggregated per interval over long ranges, the `--json` schema and the table.
 *
 * Where each column comes from (docs/on-call.md): time, score, parser health, reasons and state from
 * `assessments`, and so are the smoothed score and scored band (stored with each tick since migration 011;
 * for a tick stored before, the running loop's `history` query has them while the tick is among its last
 * 50); the band from `control_audit` (the band is a control field, so every band change is an audited
 * change, linked to the tick that made it); decisions from `decisions`; what a tick did besides controls
 * (notifications, reminders) only from the loop's `history` query, because the loop keeps it in its state.
 */
import { recordSourceSchema, sourceLine } from '../loop-record/source';
import { z } from 'zod';
import { HEALTH_BANDS, type HealthBand } from '../../core/common/names';
import { describeChange } from '../../core/control/controls';
import type { TickSummary } from '../../loop/messages';
import type { AssessmentPageRow } from '../../server/db/assessments';
import type { ControlChange, DecisionEvent } from '../../server/db/history';
import { compareReasons } from '../../core/scoring/reasons';
import { type BandCause, bandCause, bandLabel } from '../../core/control/band-wording';
import { formatDuration } from '../../core/common/durations';
import { plural } from '../../core/common/plural';
import { bandCauseSchema } from './band-cause-schema';
import { type AlertRow, alertLine, alertSchema } from '../../core/control/alerts';

/** Most rows a default `history` prints (the default `--every` is chosen to stay under it). */
export const DEFAULT_MAX_ROWS = 500;
/** Most rows an explicit `--every` may produce. */
export const MAX_ROWS = 10_000;
/** The intervals a default aggregation picks from, smallest first. */
export const EVERY_STEPS_MS = [
  60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 10_800_000, 21_600_000, 43_200_000,
  86_400_000, 604_800_000,
];

const band = z.enum(HEALTH_BANDS);
const actionSchema = z.object({ at: z.string(), actor: z.string(), change: z.string(), reason: z.string() });
const decisionSchema = z.object({ at: z.string(), kind: z.string(), who: z.string(), why: z.string() });
const rangeSchema = z.object({ min: z.number(), mean: z.number(), max: z.number() }).nullable();

export const tickRowSchema = z.object({
  kind: z.literal('tick'),
  at: z.string(),
  tick: z.number().int(),
  chainId: z.string().nullable(),
  /** scored, insufficient-data, learning (or null for a row written before states were stored). */
  state: z.string().nullable(),
  /** The loop's band after this tick (null before its first controls were recorded). */
  band: band.nullable(),
  /**
   * What put the site in that band (core/control/band-wording.ts): the reasons of the tick whose change set it, or a
   * person's decision; null when the band was set before the range (its tick is not read).
   */
  bandCause: bandCauseSchema.nullable(),
  score: z.number().nullable(),
  /**
   * The rounded smoothed score the tick's band was judged on: stored with the tick; for a tick stored before it
   * was, from the running loop's recent history when the tick is in it, else null (see `smoothedScores`).
   */
  smoothedScore: z.number().nullable(),
  /** The band the score put the site in (before the loop's gate: a pause holds `band`), from the same place. */
  scoredBand: band.nullable(),
  parserHealth: z.number().nullable(),
  reasons: z.array(z.string()),
  /** Control changes this tick made, and those made by decisions since the previous tick. */
  actions: z.array(actionSchema),
  decisions: z.array(decisionSchema),
  /** Route and parser alerts the loop raised at this tick (or since the previous one): reasons beside the band's. */
  alerts: z.array(alertSchema),
  /**
   * What the loop said this tick did (notifications, reminders…), when the tick is still in its recent history; else
   * null.
   */
  loopActions: z.array(z.string()).nullable(),
});
export type TickRow = z.output<typeof tickRowSchema>;

export const bucketRowSchema = z.object({
  kind: z.literal('bucket'),
  from: z.string(),
  to: z.string(),
  ticks: z.number().int(),
  /** The most urgent band seen in the interval (resisting > degrading > learning > healthy). */
  band: band.nullable(),
  /** Ticks per band in the interval. */
  bands: z.record(z.string(), z.number().int()),
  score: rangeSchema,
  smoothedScore: rangeSchema,
  parserHealth: rangeSchema,
  /** Reasons with the number of ticks that gave them, most frequent first. */
  reasons: z.array(z.object({ reason: z.string(), ticks: z.number().int() })),
  actions: z.array(actionSchema),
  decisions: z.array(decisionSchema),
  alerts: z.array(alertSchema),
});
export type BucketRow = z.output<typeof bucketRowSchema>;

/** `history --json`: one document. Documented in docs/on-call.md. */
export const historySchema = z.object({
  site: z.string(),
  from: z.string(),
  to: z.string(),
  /** Ticks stored in the range. */
  ticks: z.number().int(),
  /** The aggregation interval in ms, or null: one row per tick. */
  everyMs: z.number().int().nullable(),
  /** Where the smoothed scores come from, in words: stored with the ticks, or for older ticks the running loop. */
  smoothedScores: z.string(),
  /** The live loop's stored ticks, or a replay made for this history (client/loop-record/source.ts). */
  source: recordSourceSchema,
  rows: z.array(z.discriminatedUnion('kind', [tickRowSchema, bucketRowSchema])),
});
export type History = z.output<typeof historySchema>;

/** The running loop's recent ticks (the `history` query), with the chain they belong to. */
export interface LiveTicks {
  chainId: string;
  ticks: readonly TickSummary[];
}

const actionOf = (c: ControlChange): TickRow['actions'][number] => ({
  at: c.at.toISOString(),
  actor: c.actor,
  change: describeChange(c.oldControls, c.newControls),
  reason: c.reason,
});
const decisionOf = (d: DecisionEvent): TickRow['decisions'][number] => ({
  at: d.at.toISOString(),
  kind: d.kind,
  who: d.who,
  why: d.why,
});

/**
 * One row per tick. The band starts at `bandBefore` and follows every change in time order: a tick's
 * own change applies to its row; a change made by a decision (or by a tick outside the range) applies
 * from its time on and is listed on the row of the tick before it (the first row when none is). A
 * decision's change names the assessment that led to it, but belongs to the decision's time. An alert (route,
 * parser) belongs to the last tick at or before its time (the loop raises it in the tick's own transaction), the
 * first row when it came before every tick.
 */
export function tickRows(
  ticks: readonly AssessmentPageRow[],
  changes: readonly ControlChange[],
  decisions: readonly DecisionEvent[],
  bandBefore: HealthBand | null,
  live: LiveTicks | null,
  alerts: readonly AlertRow[] = [],
): TickRow[] {
  const keys = new Set(ticks.map((t) => t.assessmentKey));
  const own = new Map<string, ControlChange[]>();
  const loose: ControlChange[] = [];
  for (const c of changes) {
    if (c.decisionKey === null && c.assessmentKey !== null && keys.has(c.assessmentKey))
      own.set(c.assessmentKey, [...(own.get(c.assessmentKey) ?? []), c]);
    else loose.push(c);
  }
  const liveByTick = new Map((live?.ticks ?? []).map((t) => [t.tick, t]));
  let current = bandBefore;
  // What set `current`: unknown for the band carried in from before the range.
  let cause: BandCause | null = null;
  const rows: TickRow[] = [];
  const early: { actions: TickRow['actions']; decisions: TickRow['decisions'] } = { actions: [], decisions: [] };
  let li = 0;
  let di = 0;
  const attach = (until: number): void => {
    const target = rows[rows.length - 1] ?? early;
    for (; li < loose.length && loose[li]!.at.getTime() <= until; li += 1) {
      current = loose[li]!.newControls.band;
      // A decision's change is the person's; a tick's outside the range is not read.
      cause = loose[li]!.decisionKey === null ? null : { kind: 'person' };
      target.actions.push(actionOf(loose[li]!));
    }
    for (; di < decisions.length && decisions[di]!.at.getTime() <= until; di += 1)
      target.decisions.push(decisionOf(decisions[di]!));
  };
  for (const t of ticks) {
    attach(Date.parse(t.assessedAt) - 1);
    const mine = own.get(t.assessmentKey) ?? [];
    for (const c of mine) {
      current = c.newControls.band;
      cause = bandCause(current, t.reasons);
    }
    const fromLoop = live !== null && t.chainId === live.chainId ? liveByTick.get(t.tick) : undefined;
    // Stored with the tick when it was (a stored scored band says so: the score itself may be null).
    const stored = t.scoredBand !== null;
    rows.push({
      kind: 'tick',
      at: new Date(Date.parse(t.assessedAt)).toISOString(),
      tick: t.tick,
      chainId: t.chainId,
      state: t.state,
      band: current,
      bandCause: current === null ? null : cause,
      score: t.score,
      smoothedScore: stored ? t.smoothedScore : (fromLoop?.smoothedScore ?? null),
      scoredBand: stored ? t.scoredBand : (fromLoop?.scoredBand ?? null),
      parserHealth: t.parserHealth,
      reasons: t.reasons,
      actions: mine.map(actionOf),
      decisions: [],
      alerts: [],
      loopActions: fromLoop ? fromLoop.actions : null,
    });
  }
  attach(Number.POSITIVE_INFINITY);
  for (const a of alerts) {
    const at = Date.parse(a.at);
    const row = rows.filter((r) => Date.parse(r.at) <= at).pop() ?? rows[0];
    row?.alerts.push(a);
  }
  if (rows.length > 0) {
    rows[0]!.actions.unshift(...early.actions);
    rows[0]!.decisions.unshift(...early.decisions);
  }
  return rows;
}

/**
 * Where the smoothed scores of these ticks came from, in words (`smoothedScores`, the table's last line). Each
 * tick stores its own since migration 011; a tick stored before has one only while the running loop still
 * keeps it (its last 50 ticks, this chain). `liveProblem`: why the loop did not answer, or null.
 */
export function smoothedScoresNote(
  ticks: readonly AssessmentPageRow[],
  live: LiveTicks | null,
  liveProblem: string | null,
): string {
  const older = ticks.filter((t) => t.scoredBand === null);
  if (older.length === 0) return 'stored with each tick';
  const head =
    older.length === ticks.length
      ? `not stored with these ${plural(ticks.length, 'tick')} (stored before the release that stores it)`
      : `stored with each tick, but not with ${plural(older.length, 'tick')} stored before the release that stores it`;
  if (live === null) return `${head}; the running loop's recent ticks are not available (${liveProblem ?? 'no loop'})`;
  const kept = new Set(live.ticks.map((t) => t.tick));
  const fromLoop = older.filter((t) => t.chainId === live.chainId && kept.has(t.tick)).length;
  return `${head}: ${fromLoop} of those from the running loop (its last 50 ticks), ${older.length - fromLoop} without`;
}

/** The default `--every`: none when the ticks fit in `maxRows`, else the smallest step that keeps the rows under it. */
export function defaultEvery(rangeMs: number, ticks: number, maxRows = DEFAULT_MAX_ROWS): number | null {
  if (ticks <= maxRows) return null;
  return (
    EVERY_STEPS_MS.find((step) => Math.ceil(rangeMs / step) + 1 <= maxRows) ??
    EVERY_STEPS_MS[EVERY_STEPS_MS.length - 1]!
  );
}

/** Buckets over the grid of `everyMs` since the epoch (as ticks are), so the same range aggregates alike. */
export function bucketCount(from: Date, to: Date, everyMs: number): number {
  return Math.floor((to.getTime() - 1) / everyMs) - Math.floor(from.getTime() / everyMs) + 1;
}

const BAND_URGENCY: readonly HealthBand[] = ['stopped', 'resisting', 'degrading', 'learning', 'healthy'];

function range(values: readonly (number | null)[]): BucketRow['score'] {
  const v = values.filter((x): x is number => x !== null);
  if (v.length === 0) return null;
  return {
    min: Math.min(...v),
    mean: Math.round((v.reduce((a, b) => a + b, 0) / v.length) * 10) / 10,
    max: Math.max(...v),
  };
}

/** Tick rows folded into one row per `everyMs` that holds any tick. */
export function aggregate(rows: readonly TickRow[], everyMs: number): BucketRow[] {
  const buckets = new Map<number, TickRow[]>();
  for (const r of rows) {
    const start = Math.floor(Date.parse(r.at) / everyMs) * everyMs;
    const list = buckets.get(start);
    if (list) list.push(r);
    else buckets.set(start, [r]);
  }
  return [...buckets.entries()].map(([start, list]): BucketRow => {
    const bands: Record<string, number> = {};
    for (const r of list) if (r.band !== null) bands[r.band] = (bands[r.band] ?? 0) + 1;
    const reasons = new Map<string, number>();
    for (const r of list) for (const reason of r.reasons) reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
    return {
      kind: 'bucket',
      from: new Date(start).toISOString(),
      to: new Date(start + everyMs).toISOString(),
      ticks: list.length,
      band: BAND_URGENCY.find((b) => bands[b] !== undefined) ?? null,
      bands,
      score: range(list.map((r) => r.score)),
      smoothedScore: range(list.map((r) => r.smoothedScore)),
      parserHealth: range(list.map((r) => r.parserHealth)),
      // Most ticks first; ties in the one order of reasons (by weight: core/scoring/reasons.ts), as status lists them.
      reasons: [...reasons.entries()]
        .sort((a, b) => b[1] - a[1] || compareReasons(a[0], b[0]))
        .map(([reason, ticks]) => ({ reason, ticks })),
      actions: list.flatMap((r) => r.actions),
      decisions: list.flatMap((r) => r.decisions),
      alerts: list.flatMap((r) => r.alerts),
    };
  });
}

const dash = (v: number | null): string => (v === null ? '—' : String(v));
const time = (iso: string): string => `${iso.slice(0, 19).replace('T', ' ')}Z`;
const actionText = (a: TickRow['actions'][number]): string =>
  `${a.actor === 'control-loop' ? '' : `${a.actor}: `}${a.change}`;
const decisionText = (d: TickRow['decisions'][number]): string =>
  `DECISION ${d.kind} by ${d.who} at ${time(d.at)}: ${d.why}`;

function table(header: string[], rows: string[][]): string[] {
  const widths = header.slice(0, -1).map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (i < widths.length ? c.padEnd(widths[i]!) : c))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

/** The history as a table: a line saying what it covers, the rows, and where the smoothed score came from. */
export function formatHistory(h: History): string {
  const what =
    h.everyMs === null
      ? 'one row per tick'
      : `one row per ${formatDuration(h.everyMs)} (${plural(h.rows.length, 'row')}; --every to change)`;
  const source = sourceLine(h.source);
  const lines = [
    `${h.site}: ${plural(h.ticks, 'tick')} from ${time(h.from)} to ${time(h.to)}, ${what}`,
    ...(source === null ? [] : [source]),
    '',
  ];
  if (h.everyMs === null) {
    const rows = h.rows.map((r) => {
      const t = r as TickRow;
      const did = [
        ...t.actions.map(actionText),
        ...(t.loopActions ?? []).filter((a) => !t.actions.some((x) => x.change === a)),
        ...t.decisions.map(decisionText),
      ];
      return [
        time(t.at),
        String(t.tick),
        t.band === null ? '—' : t.bandCause === null ? t.band : bandLabel(t.band, t.bandCause),
        `${dash(t.score)} / ${dash(t.smoothedScore)}`,
        dash(t.parserHealth),
        [
          t.reasons.join(',') || (t.state === 'scored' || t.state === null ? '—' : `(${t.state})`),
          ...t.alerts.map((a) => `+ ${alertLine(a)}`),
        ].join(' '),
        did.join('; ') || '—',
      ];
    });
    lines.push(
      ...table(['TIME', 'TICK', 'BAND', 'SCORE / SMOOTHED', 'PARSER', 'REASONS', 'ACTIONS AND DECISIONS'], rows),
    );
  } else {
    const r3 = (r: BucketRow['score']): string => (r === null ? '—' : `${r.mean} (${r.min}–${r.max})`);
    const rows = h.rows.map((r) => {
      const b = r as BucketRow;
      const did = [...b.actions.map(actionText), ...b.decisions.map(decisionText)];
      return [
        time(b.from),
        String(b.ticks),
        b.band ?? '—',
        r3(b.score),
        r3(b.smoothedScore),
        b.parserHealth === null ? '—' : String(b.parserHealth.min),
        [
          b.reasons
            .slice(0, 3)
            .map((x) => `${x.reason}×${x.ticks}`)
            .join(',') || '—',
          ...b.alerts.map((a) => `+ ${alertLine(a)}`),
        ].join(' '),
        did.join('; ') || '—',
      ];
    });
    lines.push(
      ...table(
        [
          'FROM',
          'TICKS',
          'WORST BAND',
          'SCORE MEAN (MIN–MAX)',
          'SMOOTHED MEAN (MIN–MAX)',
          'PARSER MIN',
          'TOP REASONS',
          'ACTIONS AND DECISIONS',
        ],
        rows,
      ),
    );
  }
  lines.push('', `smoothed: ${h.smoothedScores}`);
  return `${lines.join('\n')}\n`;
}
