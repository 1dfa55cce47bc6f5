/**
 * A site with incidents written to order: `target-health simulate quiet` (a healthy site: quiet history days, then
 * a busier last day), with the events inside chosen stretches turned into Cloudflare block or challenge pages (the
 * scenarios' own, core/scenarios/pages.ts) with probabilities that may change over the stretch (a blip, a ramp), the
 * others slowed down if asked, then `target-health ingest` of the result. Which
 * events turn is decided by a hash of their id, so the same script gives the same traffic.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ScenarioTruth, scenarioTruthSchema } from '../../core/scenarios/truth';
import { type PageContext, renderPage } from '../../core/scenarios/pages';
import { Rng } from '../../core/scenarios/rng';
import { CLI, cleanEnv, run } from './processes';
import { env } from './services';

/**
 * From `from` to `to` (epoch ms) an event is a Cloudflare block page (a hard block) with probability `hard(t)`, else a
 * Cloudflare challenge with probability `challenge(t)` (default none).
 */
export interface Stretch {
  from: number;
  to: number;
  hard: (t: number) => number;
  challenge?: (t: number) => number;
  /** The other events' latency times this (default 1): a site slowing down while it refuses. */
  slow?: (t: number) => number;
}

export interface ScriptedSite {
  site: string;
  dir: string;
  truth: ScenarioTruth;
  /** Events turned into blocks. */
  blocked: number;
}

/** A number in [0, 1) from the event's id: the same id, the same coin. */
function coin(id: string): number {
  return createHash('sha256').update(id).digest().readUInt32BE(0) / 2 ** 32;
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
      const t = Date.parse(e.ts);
      const s = o.stretches.find((x) => t >= x.from && t < x.to);
      if (s === undefined) return line;
      const c = coin(e.eventId);
      const hard = s.hard(t);
      const kind = c < hard ? 'cloudflare-block' : c < hard + (s.challenge?.(t) ?? 0) ? 'cloudflare-challenge' : null;
      if (kind === null) {
        const slow = s.slow?.(t) ?? 1;
        return slow === 1 ? line : JSON.stringify({ ...e, latencyMs: Math.round((e.latencyMs as number) * slow) });
      }
      blocked += 1;
      const { extraction: _x, status: _s, networkError: _n, headers: _h, bodySample: _b, bytes: _y, ...rest } = e;
      const route = e.route as { country?: string } | undefined;
      const page = renderPage(kind, new Rng(Math.floor(c * 2 ** 32)), {
        host: site,
        pageType: e.pageType as PageContext['pageType'],
        path: '/',
        country: route?.country ?? 'US',
        ts: t,
      });
      return JSON.stringify({
        ...rest,
        status: page.status,
        bytes: page.bytes,
        headers: page.headers,
        bodySample: page.bodySample,
      });
    });
  const path = join(dir, 'scripted.ndjson');
  writeFileSync(path, `${lines.join('\n')}\n`);
  const ingested = await run(CLI, ['ingest', path], cleanEnv({ DATABASE_URL: env('DATABASE_URL') }));
  if (ingested.code !== 0) throw new Error(ingested.stderr);
  return { site, dir, truth, blocked };
}
