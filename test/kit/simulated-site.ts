/**
 * A site with stored history, as a user would make one: `target-health simulate <scenario> --days 3` (or more)
 * into a fresh folder, then `target-health ingest` of its NDJSON. The site name is new on every call
 * (`<prefix>-<random>.sim.example`), so tests sharing the database never see each other's traffic.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ScenarioTruth, scenarioTruthSchema } from '../../core/scenarios/truth';
import { CLI, cleanEnv, run } from './processes';
import { env } from './services';

export interface SimulatedSite {
  site: string;
  /** The folder the scenario was written to (the test may write its own files there too). */
  dir: string;
  truth: ScenarioTruth;
}

/** `days`: the simulated period (`simulate --days`), the incident's day last. */
export async function simulateAndIngest(scenario: string, prefix: string, days = 3): Promise<SimulatedSite> {
  const dir = mkdtempSync(join(env('TH_TEST_DIR'), `${prefix}-`));
  const site = `${prefix}-${randomUUID().slice(0, 8)}.sim.example`;
  const simulated = await run(
    CLI,
    ['simulate', scenario, '--days', String(days), '--site', site, '--out', dir],
    cleanEnv({}),
  );
  if (simulated.code !== 0) throw new Error(simulated.stderr);
  const truth = scenarioTruthSchema.parse(JSON.parse(readFileSync(join(dir, `${scenario}.truth.json`), 'utf8')));
  const ingested = await run(
    CLI,
    ['ingest', join(dir, `${scenario}.ndjson`)],
    cleanEnv({ DATABASE_URL: env('DATABASE_URL') }),
  );
  if (ingested.code !== 0) throw new Error(ingested.stderr);
  return { site, dir, truth };
}
