/**
 * A site with incidents written to order: `target-health simulate quiet` (a healthy site: quiet history days, then
 * a busier last day), with the events inside chosen stretches turned into Cloudflare block or challenge pages
 * (tools/scenarios/stretches.ts), then `target-health ingest` of the result.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ScenarioTruth, scenarioTruthSchema } from '../../core/scenarios/truth';
import { type Stretch, stretchEvent } from '../../tools/scenarios/stretches';
import { CLI, cleanEnv, run } from './processes';
import { env } from './services';

export interface ScriptedSite {
  site: string;
  dir: string;
  truth: ScenarioTruth;
  /** Events turned into blocks. */
  blocked: number;
}

export async function scriptedSite(
  prefix: string,
  o: { days: number; end: number; stretches: readonly Stretch[] },
): Promise<ScriptedSite> {
  const dir = mkdtempSync(join(env('TH_TEST_DIR'), `${prefix}-`));
  const site = `${prefix}-${randomUUID().slice(0, 8)}.sim.example`;
  const simulated = await run(
    CLI,
    [
      'simulate',
      'quiet',
      '--days',
      String(o.days),
      '--site',
      site,
      '--end',
      new Date(o.end).toISOString(),
      '--out',
      dir,
    ],
    cleanEnv({}),
  );
  if (simulated.code !== 0) throw new Error(simulated.stderr);
  const truth = scenarioTruthSchema.parse(JSON.parse(readFileSync(join(dir, 'quiet.truth.json'), 'utf8')));
  let blocked = 0;
  const lines = readFileSync(join(dir, 'quiet.ndjson'), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((line) => {
      const e = JSON.parse(line) as Record<string, unknown> & { eventId: string; ts: string };
      const made = stretchEvent(e, site, o.stretches);
      if (made.blocked) blocked += 1;
      return made.event === e ? line : JSON.stringify(made.event);
    });
  const path = join(dir, 'scripted.ndjson');
  writeFileSync(path, `${lines.join('\n')}\n`);
  const ingested = await run(CLI, ['ingest', path], cleanEnv({ DATABASE_URL: env('DATABASE_URL') }));
  if (ingested.code !== 0) throw new Error(ingested.stderr);
  return { site, dir, truth, blocked };
}
