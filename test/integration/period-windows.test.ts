/**
 * The replay's in-memory windows (server/db/signal-store/period-windows.ts) against the per-tick statement the
 * live loop runs, on real stored traffic (`simulate` + `ingest` of a dead pool: several routes, one failing):
 * every tick's current and recent window equal, with and without a resume's gate; and a whole replay equal tick for
 * tick, assessment for assessment, to one that reads every window from PostgreSQL.
 */
import { parseSiteHealthInput, type SiteHealthConfig } from '../../core/control/config';
import { createPool, type Pool } from '../../server/db/pool';
import { loadPeriodWindows } from '../../server/db/signal-store/period-windows';
import { readCurrentWindow, windowBounds } from '../../server/db/signal-store/read-windows';
import { memoisedReads, replaySite } from '../../tools/replay/engine';
import type { TickAssessment } from '../../core/control/tick-assessment';
import { env } from '../kit/services';
import { simulateAndIngest } from '../kit/simulated-site';

const M = 60_000;
const H = 60 * M;
let pool: Pool;
let site: string;
let onset: number;
let config: SiteHealthConfig;

beforeAll(async () => {
  pool = createPool(env('DATABASE_URL'), 2);
  const s = await simulateAndIngest('dead-pool', 'period');
  site = s.site;
  onset = Date.parse(s.truth.onset!);
  const parsed = parseSiteHealthInput({ site });
  if (!parsed.ok) throw new Error(parsed.message);
  const { carried: _carried, ...rest } = parsed.value;
  config = rest;
}, 300_000);
afterAll(async () => pool.end());

test('every tick of three hours: the window summed in memory is the statement’s, gate or not', async () => {
  const from = new Date(onset - H);
  const to = new Date(onset + 2 * H);
  const loaded = (await loadPeriodWindows(pool, site, new Date(from.getTime() - H), to))!;
  expect(loaded).not.toBeNull();
  expect(loaded.rows).toBeGreaterThan(180);
  let routes = 0;
  for (let t = from.getTime(); t < to.getTime(); t += M + 7_000) {
    // A resume's gate on every third tick: the window starts at the first whole minute from it.
    const notBefore = (t / M) % 3 < 1 ? new Date(t - 6 * M - 20_000) : null;
    const bounds = windowBounds({ asOf: new Date(t), ...config.window, notBefore });
    const sql = await readCurrentWindow(pool, site, bounds.current, bounds.recent.from);
    const memory = loaded.current(bounds.current, bounds.recent.from);
    expect(memory).toEqual(sql);
    routes = Math.max(routes, sql.routes.length);
  }
  // The pool's routes are there to be summed apart.
  expect(routes).toBeGreaterThan(2);
});

test('outside the period read there is no answer: the replay then asks PostgreSQL', async () => {
  const loaded = (await loadPeriodWindows(pool, site, new Date(onset), new Date(onset + H)))!;
  expect(loaded.current({ from: new Date(onset - M), to: new Date(onset + 14 * M) }, new Date(onset))).toBeNull();
  expect(loaded.current({ from: new Date(onset + 50 * M), to: new Date(onset + 61 * M) }, new Date(onset))).toBeNull();
});

test('a replay over in-memory windows equals one reading every window from PostgreSQL, tick for tick', async () => {
  const opts = { site, from: new Date(onset - H), to: new Date(onset + 3 * H), tickMs: M, config };
  const assessed = (into: Array<TickAssessment | null>) => ({
    onTick: (_t: unknown, d: { assessed: TickAssessment | null }) => into.push(d.assessed),
  });
  const fast: Array<TickAssessment | null> = [];
  const slow: Array<TickAssessment | null> = [];
  const a = await replaySite(pool, { ...opts, ...assessed(fast) });
  const b = await replaySite(pool, { ...opts, ...assessed(slow), deps: { readWindows: memoisedReads().readWindows } });
  expect(a.ticks).toEqual(b.ticks);
  expect(fast).toEqual(slow);
  expect(a.summary).toEqual(b.summary);
  // The dead pool is seen: the comparison is over ticks that matter.
  expect(a.ticks.some((t) => t.routeVerdict === 'route-specific')).toBe(true);
}, 120_000);
