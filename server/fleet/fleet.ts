/**
 * `target-health sites`, the pure part: the filters as typed, the urgency order, the `--json` schema and
 * the table. The rows are the API's (`GET /v1/sites`, server/api/site-list.ts), so CLI and API answer alike.
 */
import { z } from 'zod';
import { UserError } from '../../core/common/user-error';
import { describeValue } from '@target-health/crawler/events/zod-issues';
import { LISTED_BANDS, siteSummarySchema, type SiteSummary } from '../api/schemas/sites';
import { sparkline } from './sparkline';
import type { Trend, TrendRange } from './trend';

export type ListedBand = (typeof LISTED_BANDS)[number];

/**
 * Most urgent first:
 *   person     resisting, or waiting for a person (paused by the loop or by hand);
 *   attention  degrading, or the loop cannot assess its ticks (LoopProblem);
 *   no-score   learning, or the latest tick had no score (too little traffic), or no band yet;
 *   healthy    the rest.
 * Within a tier: lowest smoothed score first (none last), then the site's name.
 */
export const URGENCIES = ['person', 'attention', 'no-score', 'healthy'] as const;
export type Urgency = (typeof URGENCIES)[number];

export function urgencyOf(
  s: Pick<SiteSummary, 'band' | 'awaitingHuman' | 'problem' | 'score' | 'lastAssessedAt'>,
): Urgency {
  if (s.awaitingHuman || s.band === 'resisting') return 'person';
  if (s.band === 'degrading' || s.problem !== null) return 'attention';
  if (s.band === null || s.band === 'learning' || s.score === null) return 'no-score';
  return 'healthy';
}

export const fleetSiteSchema = siteSummarySchema.extend({
  urgency: z.enum(URGENCIES),
  /**
   * Mean raw score per bucket of the fleet's `trend` range, oldest first (null: no scored tick); null when not read.
   */
  trend: z.array(z.number().nullable()).nullable(),
});
export type FleetSite = z.output<typeof fleetSiteSchema>;

/** `sites --json`: one document (one per refresh with `--watch`). Documented in docs/on-call.md. */
export const fleetSchema = z.object({
  generatedAt: z.string(),
  filter: z.object({
    bands: z.array(z.enum(LISTED_BANDS)).nullable(),
    awaiting: z.boolean(),
    site: z.array(z.string()),
  }),
  /** Sites listed per band (after the filters). */
  counts: z.object(
    Object.fromEntries(LISTED_BANDS.map((b) => [b, z.number().int()])) as Record<ListedBand, z.ZodNumber>,
  ),
  awaiting: z.number().int(),
  sites: z.array(fleetSiteSchema),
  /** The range of the sites' `trend` points (the last 24 h in 20 buckets); null when not read. */
  trend: z
    .object({
      from: z.string(),
      to: z.string(),
      bucketMs: z.number().int().positive(),
      points: z.number().int().positive(),
    })
    .nullable(),
});
export type Fleet = z.output<typeof fleetSchema>;

export function compareUrgency(a: FleetSite, b: FleetSite): number {
  const tier = URGENCIES.indexOf(a.urgency) - URGENCIES.indexOf(b.urgency);
  if (tier !== 0) return tier;
  const sa = a.smoothedScore ?? Number.POSITIVE_INFINITY;
  const sb = b.smoothedScore ?? Number.POSITIVE_INFINITY;
  if (sa !== sb) return sa < sb ? -1 : 1;
  return a.site < b.site ? -1 : a.site > b.site ? 1 : 0;
}

/** `--band resisting --band degrading,learning` → the distinct bands; a one-line error for any other word. */
export function parseBands(values: readonly string[]): ListedBand[] | null {
  if (values.length === 0) return null;
  const bands = new Set<ListedBand>();
  for (const v of values.flatMap((x) => x.split(','))) {
    const b = v.trim().toLowerCase();
    if (b === 'stopped')
      throw new UserError(
        '--band: a stopped loop has ended and is not listed; see its last controls with `target-health ' +
          'controls <site>`',
      );
    if (!(LISTED_BANDS as readonly string[]).includes(b))
      throw new UserError(
        `--band: ${describeValue(v)} is not a band; use ${LISTED_BANDS.join(', ')} (repeat --band or separate ` +
          `with commas)`,
      );
    bands.add(b as ListedBand);
  }
  return [...bands];
}

/** `--site` patterns: with `*` or `?` a glob over the whole name, else a substring; case-insensitive. */
export function siteMatcher(patterns: readonly string[]): (site: string) => boolean {
  if (patterns.length === 0) return () => true;
  const tests = patterns.map((raw) => {
    const p = raw.trim().toLowerCase();
    if (p === '') throw new UserError('--site: empty pattern; give part of a name (shop) or a glob (*.example.com)');
    if (!/[*?]/.test(p)) return (s: string) => s.includes(p);
    const re = new RegExp(
      `^${p
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*/g, '.*')
        .replace(/\?/g, '.')}$`,
    );
    return (s: string) => re.test(s);
  });
  return (site) => tests.some((t) => t(site.toLowerCase()));
}

/** The rows listed, filtered by name and ordered by urgency, with their counts. */
export function buildFleet(rows: readonly SiteSummary[], filter: Fleet['filter'], now: Date): Fleet {
  const matches = siteMatcher(filter.site);
  const sites = rows
    .filter((r) => matches(r.site))
    .filter((r) => !filter.awaiting || r.awaitingHuman)
    .filter((r) => filter.bands === null || (r.band !== null && (filter.bands as readonly string[]).includes(r.band)))
    .map((r): FleetSite => ({ ...r, urgency: urgencyOf(r), trend: null }))
    .sort(compareUrgency);
  const counts = Object.fromEntries(LISTED_BANDS.map((b) => [b, sites.filter((s) => s.band === b).length])) as Record<
    ListedBand,
    number
  >;
  return {
    generatedAt: now.toISOString(),
    filter,
    counts,
    awaiting: sites.filter((s) => s.awaitingHuman).length,
    sites,
    trend: null,
  };
}

/** The fleet with each site's score trend (read for all listed sites at once, server/fleet/trend.ts). */
export function withTrends(fleet: Fleet, range: TrendRange, trends: ReadonlyMap<string, Trend>): Fleet {
  return {
    ...fleet,
    sites: fleet.sites.map((s) => ({
      ...s,
      trend: trends.get(s.site)?.points ?? Array.from({ length: range.points }, () => null),
    })),
    trend: {
      from: range.from.toISOString(),
      to: range.to.toISOString(),
      bucketMs: range.bucketMs,
      points: range.points,
    },
  };
}

/** `3h 05m ago`: how long ago `iso` was, in the largest two units. */
export function ago(iso: string, now: Date): string {
  const s = Math.max(0, Math.round((now.getTime() - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s ago`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ago`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ${String(m % 60).padStart(2, '0')}m ago`;
  return `${Math.floor(h / 24)}d ${String(h % 24).padStart(2, '0')}h ago`;
}

const dash = (v: number | null): string => (v === null ? '—' : String(v));
const cap = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

function waitingCell(s: FleetSite, now: Date): string {
  if (!s.awaitingHuman) return '—';
  if (s.awaitingSince !== null)
    return `${s.awaitingSince.slice(0, 16).replace('T', ' ')}Z (${ago(s.awaitingSince, now)})`;
  return 'yes (since: unknown)';
}

function changeCell(s: FleetSite, now: Date): string {
  const c = s.lastChange;
  if (c === null) return '—';
  return `${ago(c.at, now)} ${c.actor}: ${c.change} — ${cap(c.reason, 90)}`;
}

/** The trend's nominal span, its points × their width (the range read ends on a grid: docs/on-call.md). */
const trendHours = (t: NonNullable<Fleet['trend']>): number => Math.round((t.points * t.bucketMs) / 3_600_000);

/** The fleet as a table: a summary line, then one line per site (the last column unpadded). */
export function formatFleet(fleet: Fleet, now: Date): string {
  const c = fleet.counts;
  const lines = [
    `${fleet.sites.length} site${fleet.sites.length === 1 ? '' : 's'}: ${c.resisting} resisting, ` +
      `${c.degrading} degrading, ${c.learning} learning, ${c.healthy} healthy; ${fleet.awaiting} waiting for a ` +
      `person`,
  ];
  if (fleet.sites.length === 0) return `${lines[0]}\n`;
  const rows = fleet.sites.map((s) => [
    s.site,
    `${s.band ?? '—'}${s.problem === null ? '' : ` (${s.problem})`}`,
    `${dash(s.score)} / ${dash(s.smoothedScore)}`,
    ...(fleet.trend === null ? [] : [s.trend === null || s.trend.every((p) => p === null) ? '—' : sparkline(s.trend)]),
    dash(s.parserHealth),
    waitingCell(s, now),
    changeCell(s, now) + (s.stateUnavailable === undefined ? '' : `  [waiting since unknown: ${s.stateUnavailable}]`),
  ]);
  const header = [
    'SITE',
    'BAND',
    'SCORE / SMOOTHED',
    ...(fleet.trend === null ? [] : [`LAST ${trendHours(fleet.trend)}H`]),
    'PARSER',
    'WAITING FOR A PERSON SINCE',
    'LAST CHANGE AND WHY',
  ];
  const widths = header.slice(0, -1).map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string =>
    cells
      .map((cell, i) => (i < widths.length ? cell.padEnd(widths[i]!) : cell))
      .join('  ')
      .trimEnd();
  lines.push('', line(header), ...rows.map(line));
  return `${lines.join('\n')}\n`;
}
