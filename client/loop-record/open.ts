/**
 * Which record a command reads (client/loop-record/record.ts): the store's, where the live loop ticked over the
 * period; else — and always with `--config` — a replay made now over the stored traffic, with the settings in
 * force then (client/loop-record/settings-in-force.ts) or the file's, starting a warm-up before the period so
 * the smoothing and the streaks have settled when it begins (the cold start a replay from the period's first
 * minute would make is the artefact the review's tuning must never report), with the people's stored decisions
 * applied at their times.
 */
import { UserError } from '../../core/common/user-error';
import type { SiteHealthConfig } from '../../core/control/config';
import type { Pool } from '../../server/db/pool';
import { tickTimes } from '../../tools/replay/engine';
import { replayWithRecord } from '../../tools/replay/record';
import { replayConfig } from '../commands/replay';
import type { RunningSettings } from '../running-settings';
import { readDecisions } from '../review/gather';
import { replayDecisions, warmupMs } from '../review/tune';
import { type LoopRecord, replayedRecord, storedRecord } from './record';
import { settingsInForce } from './settings-in-force';

/**
 * The most ticks one on-the-fly replay makes: the store's 30 days and a warm-up at a 1-minute tick (`tune`'s longest
 * period), about 10 to 30 s of replay (`npm run bench:tune`); longer asks for a coarser --tick.
 */
export const MAX_REPLAYED_TICKS = 45_000;

export interface OpenRecordOptions {
  site: string;
  /** The period the output shows: its ticks are those in [from, to). */
  period: { from: Date; to: Date };
  /** Where the shown ticks must begin at the latest (before the period when the command looks back further). */
  replayFrom?: Date;
  /** The time whose settings are in force (the incident, `--at`, the period's start). */
  settingsAt: Date;
  /** `--config`: replay with this file's settings, whatever the store holds. */
  configFile?: string;
  /** `--tick`, in ms: the replay's tick (default: the settings' own). */
  tickMs?: number | null;
  /** True when the store has live ticks for the period (the caller knows what covers it). */
  storedTicks: boolean;
  /** The running loop's settings, asked only when nothing else says what the settings were. */
  running: () => Promise<RunningSettings>;
  now: number;
}

export interface OpenedRecord {
  record: LoopRecord;
  /** The settings the ticks were made with, when known here (a replay's; null for stored ticks). */
  config: SiteHealthConfig | null;
}

const tickFlag = (ms: number): string => (ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}`);

export async function openRecord(pool: Pool, o: OpenRecordOptions): Promise<OpenedRecord> {
  if (o.configFile === undefined && o.storedTicks) return { record: storedRecord(pool, o.site), config: null };
  const fromFile = o.configFile !== undefined;
  const inForce = fromFile ? null : await settingsInForce(pool, o.site, o.settingsAt, o.period, o.running);
  const base = fromFile ? replayConfig(o.site, '60s', o.configFile) : inForce!.config;
  const tickMs = o.tickMs ?? base.tickIntervalMs;
  const config: SiteHealthConfig = { ...base, tickIntervalMs: tickMs };
  const from = new Date((o.replayFrom ?? o.period.from).getTime() - warmupMs([config]));
  const to = new Date(Math.min(o.period.to.getTime(), o.now + 1));
  const ticks = tickTimes(from, to, tickMs).length;
  if (ticks > MAX_REPLAYED_TICKS)
    throw new UserError(
      `--tick: replaying this period at a tick of ${tickFlag(tickMs)} takes ${ticks} ticks (at most ` +
        `${MAX_REPLAYED_TICKS}); give a longer --tick (e.g. --tick 5m) or a shorter period`,
    );
  const parsed = replayDecisions(await readDecisions(pool, o.site, from, to));
  // The stored decisions passed the same schemas when they were made: a refusal here is a bug, not input.
  if (!parsed.ok) throw new Error(`stored decisions of ${o.site} do not parse: ${parsed.message}`);
  const { record } = await replayWithRecord(pool, {
    site: o.site,
    from,
    to,
    tickMs,
    config,
    decisions: parsed.decisions,
  });
  const command =
    `target-health replay ${o.site} --from ${from.toISOString()} --to ${to.toISOString()} --tick ` +
    `${tickFlag(tickMs)}${fromFile ? ` --config ${o.configFile}` : ''}` +
    `${parsed.decisions.length > 0 ? ' --decisions <the stored decisions>' : ''}`;
  return {
    config,
    record: replayedRecord(record, {
      kind: 'replayed',
      why: fromFile ? `--config ${o.configFile}` : 'no live ticks in the period',
      settingsFrom: fromFile ? `the settings of ${o.configFile}` : inForce!.from,
      tickMs,
      from: from.toISOString(),
      to: to.toISOString(),
      decisions: parsed.decisions.length,
      settingsChangedDuring: inForce?.changedDuring ?? [],
      command,
    }),
  };
}

/** True when the store has traffic for `site` in [from, to) (any minute or hour rollup row). */
export async function storedTraffic(pool: Pool, site: string, from: Date, to: Date): Promise<boolean> {
  const { rows } = await pool.query<{ any: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM rollup_minute WHERE site = $1 AND bucket >= $2 AND bucket < $3)
         OR EXISTS (SELECT 1 FROM rollup_hour WHERE site = $1 AND bucket >= $2 AND bucket < $3) AS any`,
    [site, from, to],
  );
  return rows[0]?.any === true;
}

/** True when the store has a live tick of `site` in [from, to). */
export async function storedTicksIn(pool: Pool, site: string, from: Date, to: Date): Promise<boolean> {
  const { rows } = await pool.query<{ any: boolean }>(
    'SELECT EXISTS (SELECT 1 FROM assessments WHERE site = $1 AND assessed_at >= $2 AND assessed_at < $3) AS any',
    [site, from, to],
  );
  return rows[0]?.any === true;
}

/** How far back from a time the store is searched for traffic a replay could assess then (the current window). */
export const TRAFFIC_LOOKBACK_MS = 3_600_000;

/** A live tick stands for times up to this long after it at least (a tick late on a busy machine still counts). */
const MIN_REACH_MS = 10 * 60_000;

/**
 * How long after a stored tick a time still belongs to it: three of its loop's tick intervals (from the tick
 * before it), at least ten minutes. Past that the loop was not ticking (stopped, not yet installed).
 */
export async function reachOf(pool: Pool, site: string, tick: { assessedAt: string }): Promise<number> {
  const { rows } = await pool.query<{ at: Date }>(
    `SELECT assessed_at AS at FROM assessments WHERE site = $1 AND assessed_at < $2
      ORDER BY assessed_at DESC LIMIT 1`,
    [site, new Date(tick.assessedAt)],
  );
  const before = rows[0]?.at.getTime();
  return before === undefined ? MIN_REACH_MS : Math.max(MIN_REACH_MS, 3 * (Date.parse(tick.assessedAt) - before));
}
