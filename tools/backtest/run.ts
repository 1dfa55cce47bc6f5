/**
 * A backtest: every scenario of a directory ingested into its own scratch database (through the
 * product's ingest path), replayed over its incident day with the loop's own code, the reference rules
 * evaluated on the same minute rollups, and all of it scored against the scenario's truth.
 *
 * The replay engine is passed in (`replaySite`, tools/replay/engine.ts in the product): this module depends on
 * that one function only.
 */
import type { SiteHealthConfig } from '../../core/control/config';
import { checkDatabase, createPool, type Pool } from '../../server/db/pool';
import type { ReplayResult, ReplayTick } from '../replay/types';
import type { ScenarioTruth } from '../../core/scenarios/truth';
import { type ConfigSettings, loopConfigFor, readConfigSettings } from './config-file';
import { ingestScenarioEvents } from './ingest-scenario';
import { readMinuteSeries } from './minute-series';
import { RULES_LOOKBACK_MS, evaluateReferenceRules } from './reference-rules';
import { readScenarioDir, type ScenarioFiles } from './scenario-dir';
import { createScratchDatabases, type ScratchDatabase } from './scratch-database';
import { buildScorecard, scoreScenario, type ScenarioScore, type Scorecard } from './scorecard';
import { DAY_MS, shiftDaysFor, shiftTruth, spanProblem } from './time-shift';
import { UserError } from '../../core/common/user-error';

export interface ReplaySiteOptions {
  site: string;
  from: Date;
  to: Date;
  tickMs: number;
  config: SiteHealthConfig;
  onTick?: (t: ReplayTick) => void;
}

/** tools/replay/engine.ts's `replaySite`. */
export type ReplaySite = (pool: Pool, opts: ReplaySiteOptions) => Promise<ReplayResult>;

export interface BacktestOptions {
  dir: string;
  /** The server the scratch databases are created on (DATABASE_URL); its own tables are never written. */
  databaseUrl: string;
  tickMs: number;
  configPath?: string;
  /** The settings themselves instead of a `configPath` file (as such a file would hold them). */
  settings?: ConfigSettings;
  /**
   * Further settings scored on the same ingest (each as the file of `configPath` would hold them): one
   * scorecard each, in order, in `BacktestResult.others`. `tune`'s guard rail scores its candidates so.
   */
  otherSettings?: readonly ConfigSettings[];
  /** Keep each scenario's scratch database (and say which it is) instead of dropping it. */
  keep?: boolean;
  replaySite: ReplaySite;
  /** The wall clock the scenarios are shifted against (default Date.now()). */
  now?: number;
  /** One line per step, for a progress display. */
  onProgress?: (line: string) => void;
}

export interface ScenarioTiming {
  scenario: string;
  /** Whole days the scenario was moved by (tools/backtest/time-shift.ts). */
  shiftDays: number;
  events: number;
  ingestMs: number;
  replayMs: number;
  ticks: number;
  /** Minute series read + reference rules + scoring. */
  scoreMs: number;
  /** The kept scratch database (`--keep`), else null. */
  database: string | null;
}

export interface BacktestResult {
  scorecard: Scorecard;
  /** One per `otherSettings`, in order (absent without them). */
  others?: Scorecard[];
  timings: ScenarioTiming[];
  tickMs: number;
  totalMs: number;
}

interface Prepared {
  files: ScenarioFiles;
  truth: ScenarioTruth;
  shiftDays: number;
  config: SiteHealthConfig;
  others: SiteHealthConfig[];
}

/** Everything that can be checked before a database is touched: files, truth, config, time span. */
async function prepare(options: BacktestOptions, now: number): Promise<Prepared[]> {
  const scenarios = await readScenarioDir(options.dir);
  const settings = options.settings ?? (await readConfigSettings(options.configPath));
  return scenarios.map((files) => {
    const problem = spanProblem(files.truth);
    if (problem !== undefined) throw new UserError(`${files.truthPath}: ${problem}`);
    const shiftDays = shiftDaysFor(files.truth, now);
    const truth = shiftTruth(files.truth, shiftDays);
    return {
      files,
      truth,
      shiftDays,
      config: loopConfigFor(settings, options.configPath, truth.site, options.tickMs, files.truthPath),
      others: (options.otherSettings ?? []).map((other) =>
        loopConfigFor(other, undefined, truth.site, options.tickMs, files.truthPath),
      ),
    };
  });
}

async function scoreOne(
  pool: Pool,
  p: Prepared,
  ticks: readonly ReplayTick[],
  config: SiteHealthConfig = p.config,
): Promise<ScenarioScore> {
  const from = Date.parse(p.truth.incident.from);
  const to = Date.parse(p.truth.incident.to);
  const series = await readMinuteSeries(pool, p.truth.site, {
    from: new Date(from - RULES_LOOKBACK_MS),
    to: new Date(to),
  });
  const firings = evaluateReferenceRules(series, { from, to });
  return scoreScenario(p.truth, ticks, firings, config.policy);
}

/** What one scenario's replay and scoring give back. */
interface Scored {
  score: ScenarioScore;
  others: ScenarioScore[];
  timing: ScenarioTiming;
}

/** Replays an ingested scenario, scores it, and drops (or keeps) its database. */
async function replayAndScore(
  options: BacktestOptions,
  p: Prepared,
  db: ScratchDatabase,
  ingested: { events: number; ingestMs: number },
): Promise<Scored> {
  try {
    const t1 = Date.now();
    const replay = await options.replaySite(db.pool, {
      site: p.truth.site,
      from: new Date(p.truth.incident.from),
      to: new Date(p.truth.incident.to),
      tickMs: options.tickMs,
      config: p.config,
    });
    const t2 = Date.now();
    const score = await scoreOne(db.pool, p, replay.ticks);
    const t3 = Date.now();
    const others: ScenarioScore[] = [];
    for (const config of p.others) {
      const other = await options.replaySite(db.pool, {
        site: p.truth.site,
        from: new Date(p.truth.incident.from),
        to: new Date(p.truth.incident.to),
        tickMs: options.tickMs,
        config,
      });
      others.push(await scoreOne(db.pool, p, other.ticks, config));
    }
    if (options.keep) await db.release();
    return {
      score,
      others,
      timing: {
        scenario: p.files.name,
        shiftDays: p.shiftDays,
        events: ingested.events,
        ingestMs: ingested.ingestMs,
        replayMs: t2 - t1,
        ticks: replay.ticks.length,
        scoreMs: t3 - t2,
        database: options.keep ? db.name : null,
      },
    };
  } finally {
    await db.drop();
  }
}

/**
 * Scenarios are ingested one after the other (an ingest already keeps both cores busy), and each is
 * replayed and scored while the next ones are ingested, with at most REPLAYS_IN_FLIGHT replays at once:
 * a replay is a chain of small queries that leaves the machine idle between them.
 */
export const REPLAYS_IN_FLIGHT = 2;

export async function runBacktest(options: BacktestOptions): Promise<BacktestResult> {
  const started = Date.now();
  const now = options.now ?? Date.now();
  const log = options.onProgress ?? (() => undefined);
  const prepared = await prepare(options, now);

  const probe = createPool(options.databaseUrl, 1);
  try {
    await checkDatabase(probe, options.databaseUrl);
  } finally {
    await probe.end().catch(() => undefined);
  }
  const scratch = await createScratchDatabases(options.databaseUrl);
  const removeSignalHandlers = scratch.dropOnSignal();
  const results = new Array<Scored | undefined>(prepared.length);
  const inFlight = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  try {
    for (const [i, p] of prepared.entries()) {
      if (failure || scratch.interruptedBy !== undefined) break;
      const db = await scratch.create();
      let ingested: { events: number; ingestMs: number };
      try {
        const shiftNote = p.shiftDays === 0 ? '' : ` (times moved ${p.shiftDays > 0 ? '+' : ''}${p.shiftDays} days)`;
        log(`${p.files.name}: ingesting ${p.files.eventsPath}${shiftNote}`);
        const t0 = Date.now();
        const summary = await ingestScenarioEvents(p.files.eventsPath, db.url, p.shiftDays * DAY_MS);
        ingested = { events: summary.accepted, ingestMs: Date.now() - t0 };
      } catch (err) {
        await db.drop();
        throw err;
      }
      log(
        `${p.files.name}: ${ingested.events.toLocaleString('en')} events in ` +
          `${(ingested.ingestMs / 1000).toFixed(1)} s; replaying ${p.truth.incident.from} → ` +
          `${p.truth.incident.to}`,
      );
      const job: Promise<void> = replayAndScore(options, p, db, ingested).then(
        (r) => {
          results[i] = r;
          log(`${p.files.name}: replayed ${r.timing.ticks} ticks in ${(r.timing.replayMs / 1000).toFixed(1)} s`);
        },
        (error: unknown) => {
          failure ??= { error };
        },
      );
      inFlight.add(job);
      void job.finally(() => inFlight.delete(job));
      while (inFlight.size >= REPLAYS_IN_FLIGHT) await Promise.race(inFlight);
    }
  } catch (error) {
    failure ??= { error };
  } finally {
    // Whatever happened, no replay may still use a database when they are dropped.
    await Promise.all(inFlight);
    removeSignalHandlers();
    await scratch.dropAll();
  }
  if (scratch.interruptedBy !== undefined) {
    // Whatever failed after the signal failed because its database was dropped: say what happened.
    throw new UserError(
      `interrupted (${scratch.interruptedBy}): the scratch databases ${scratch.baseName}_* were dropped; no scorecard`,
      scratch.interruptedBy === 'SIGINT' ? 130 : 143,
    );
  }
  if (failure) throw failure.error;
  const done = results.filter((r): r is Scored => r !== undefined);
  return {
    scorecard: buildScorecard(done.map((r) => r.score)),
    ...(options.otherSettings === undefined
      ? {}
      : { others: options.otherSettings.map((_, i) => buildScorecard(done.map((r) => r.others[i]!))) }),
    timings: done.map((r) => r.timing),
    tickMs: options.tickMs,
    totalMs: Date.now() - started,
  };
}
