/**
 * `tune`'s guard rail on the product's own scenario set: the scenarios `simulate all` writes (or a directory of
 * them, `--scenarios`) backtested the way `target-health backtest` scores them (tools/backtest/run.ts: ingest into
 * scratch databases on a private temporary PostgreSQL, replay of each incident day, scorecard against the truth),
 * once with the current settings and once per candidate, on the same ingest. A candidate that misses a pause or a
 * degrade the current settings made, or pauses falsely where they did not, on any scenario, is rejected.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SiteHealthConfig } from '../../core/control/config';
import { generateScenario, SCENARIO_NAMES } from '../../core/scenarios';
import { withBacktestServer } from '../../tools/backtest/private-server';
import { runBacktest } from '../../tools/backtest/run';
import type { ScenarioScore, Scorecard } from '../../tools/backtest/scorecard';
import { replaySite } from '../../tools/replay/engine';
import { toDirectory } from '../commands/simulate';

/** Days of each generated scenario (a history day, then the incident day), as the backtest's own test runs them. */
export const GUARD_SCENARIO_DAYS = 2;
const DAY = 86_400_000;

/** Why a candidate's scorecard is worse than the current settings' on the scenario set, or [] when it is not. */
export function regressions(current: Scorecard, candidate: Scorecard): string[] {
  const byName = new Map<string, ScenarioScore>(current.scenarios.map((s) => [s.scenario, s]));
  const out: string[] = [];
  for (const c of candidate.scenarios) {
    const was = byName.get(c.scenario);
    if (was === undefined) continue;
    if (c.loop.missedPause && !was.loop.missedPause) out.push(`${c.scenario}: misses its pause`);
    else if (c.loop.missedDegrade && !was.loop.missedDegrade) out.push(`${c.scenario}: misses its degrade`);
    if (c.loop.falsePauses > was.loop.falsePauses)
      out.push(`${c.scenario}: ${c.loop.falsePauses - was.loop.falsePauses} false pause(s) added`);
  }
  return out;
}

export interface GuardResult {
  /** Where the scenarios came from, in words. */
  source: string;
  current: Scorecard;
  /** Per candidate, in order: its scorecard and what it breaks ([] when nothing). */
  candidates: { card: Scorecard; regressions: string[] }[];
  totalMs: number;
}

/** Settings as a backtest's settings file holds them (the site and tick are each scenario's). */
function asSettings(c: SiteHealthConfig): Record<string, unknown> {
  const { site: _site, tickIntervalMs: _tick, ...rest } = c;
  return rest;
}

export async function guardOnScenarios(
  o: { current: SiteHealthConfig; candidates: readonly SiteHealthConfig[]; dir?: string; now: number },
  say: (line: string) => void,
): Promise<GuardResult> {
  let dir = o.dir;
  let made: string | null = null;
  if (dir === undefined) {
    made = await mkdtemp(join(tmpdir(), 'th-tune-scenarios-'));
    dir = made;
    const end = Math.floor(o.now / DAY) * DAY;
    say(`generating the ${SCENARIO_NAMES.length} scenarios (${GUARD_SCENARIO_DAYS} days each) for the guard rail`);
    await toDirectory(
      dir,
      SCENARIO_NAMES.map((name) => generateScenario(name, { days: GUARD_SCENARIO_DAYS, end })),
      () => undefined,
    );
  }
  try {
    // A private temporary PostgreSQL: the live server never sees a scratch database, and needs no CREATEDB.
    const result = await withBacktestServer(undefined, (databaseUrl) =>
      runBacktest({
        dir,
        databaseUrl,
        tickMs: o.current.tickIntervalMs,
        settings: asSettings(o.current),
        otherSettings: o.candidates.map(asSettings),
        replaySite,
        now: o.now,
        onProgress: say,
      }),
    );
    const others = result.others ?? [];
    return {
      source:
        o.dir === undefined
          ? `the ${SCENARIO_NAMES.length} scenarios of \`simulate all --days ${GUARD_SCENARIO_DAYS}\``
          : `the scenarios of ${o.dir}`,
      current: result.scorecard,
      candidates: others.map((card) => ({ card, regressions: regressions(result.scorecard, card) })),
      totalMs: result.totalMs,
    };
  } finally {
    if (made !== null) await rm(made, { recursive: true, force: true });
  }
}
