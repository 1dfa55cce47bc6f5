/**
 * The replay's in-memory windows (server/db/signal-store/period-windows.ts: the period read once and checked,
 * each tick's window a running sum) against the per-tick statement the live loop runs, on real stored traffic:
 * `simulate` + `ingest` of a dead pool (several routes, one failing), with crawler canaries (some failing) and a
 * site-wide hostile burst added. Every tick's current and recent window equal, with and without a resume's gate;
 * and a whole replay — the dead pool alerted, the burst pausing the site, a person's resume gating the windows
 * after it — equal tick for tick, assessment for assessment, to one that reads every window from PostgreSQL.
 */
import { parseSiteHealthInput, type SiteHealthConfig } from '../../core/control/config';
import { createPool, type Pool } from '../../server/db/pool';
import { loadPeriodWindows } from '../../server/db/signal-store/period-windows';
import { readCurrentWindow, windowBounds } from '../../server/db/signal-store/read-windows';
import { parseDecisionsFile } from '../../tools/replay/decisions-file';
import { memoisedReads, replaySite } from '../../tools/replay/engine';
import type { TickAssessment } from '../../core/control/tick-assessment';
import { env } from '../kit/services';
import { simulateAndIngest } from '../kit/simulated-site';
import { eventsOf, ingest, type Route } from '../kit/sites-traffic';

const M = 60_000;
const H = 60 * M;
let pool: Pool;
let site: string;
let onset: number;
let config: SiteHealthConfig;
/** The hostile burst: every route mostly refused, from onset + 100 min for 25 minutes. */
const BURST = { from: 100 * M, minutes: 25 };
/** A person resumes the paused site 35 minutes after the burst began. */
const RESUME = 135 * M;

beforeAll(async () => {
  pool = createPool(env('DATABASE_URL'), 2);
  const s = await simulateAndIngest('dead-pool', 'period');
  site = s.site;
  onset = Date.parse(s.truth.onset!);
  const parsed = parseSiteHealthInput({ site });
  if (!parsed.ok) throw new Error(parsed.message);
  const { carried: _carried, ...rest } = parsed.value;
  config = rest;

  const { rows: routes } = await pool.query<{ country: string | null; pool: string | null; session: string | null }>(
    `SELECT DISTINCT country, pool, session FROM rollup_minute WHERE site = $1 AND route_key <> '*'`,
    [site],
  );
  const route = (r: (typeof routes)[number]): Route => ({
    ...(r.country === null ? {} : { country: r.country }),
    ...(r.pool === null ? {} : { pool: r.pool }),
    ...(r.session === null ? {} : { session: r.session }),
  });
  const events: Record<string, unknown>[] = [];
  // The site turns on every route alike (no route stands out): 6 hard blocks to 1 page a minute on each.
  for (let m = 0; m < BURST.minutes; m++)
    for (const r of routes) {
      const start = onset + BURST.from + m * M;
      events.push(...eventsOf(site, { ok: 1, hard: 6, route: route(r) }, (i) => start + 1_000 + i * 7_000));
    }
  // The crawlers' own canaries, two a minute on the first route, every third one refused.
  for (let m = -60; m < 180; m++) {
    const start = onset + m * M;
    const mix = m % 3 === 0 ? { ok: 1, hard: 1 } : { ok: 2 };
    events.push(
      ...eventsOf(site, { ...mix, route: route(routes[0]!) }, (i) => start + 20_000 + i * 15_000).map((e) => ({
        ...e,
        canary: true,
      })),
    );
  }
  await ingest(pool, events);
}, 300_000);
afterAll(async () => pool.end());

test('every tick of three hours: the window summed in memory is the statement’s, gate or not', async () => {
  const from = new Date(onset - H);
  const to = new Date(onset + 2 * H);
  const loaded = (await loadPeriodWindows(pool, site, new Date(from.getTime() - H), to))!;
  expect(loaded).not.toBeNull();
  expect(loaded.rows).toBeGreaterThan(180);
  let routes = 0;
  let canaries = 0;
  for (let t = from.getTime(); t < to.getTime(); t += M + 7_000) {
    // A resume's gate on every third tick: the window starts at the first whole minute from it.
    const notBefore = (t / M) % 3 < 1 ? new Date(t - 6 * M - 20_000) : null;
    const bounds = windowBounds({ asOf: new Date(t), ...config.window, notBefore });
    const sql = await readCurrentWindow(pool, site, bounds.current, bounds.recent.from);
    const memory = loaded.current(bounds.current, bounds.recent.from);
    expect(memory).toEqual(sql);
    // Key order too: the assessments built from them are compared as JSON.
    expect(JSON.stringify(memory)).toBe(JSON.stringify(sql));
    routes = Math.max(routes, sql.routes.length);
    canaries = Math.max(canaries, sql.canary.failures);
  }
  // The pool's routes are there to be summed apart, and the canaries' failures.
  expect(routes).toBeGreaterThan(2);
  expect(canaries).toBeGreaterThan(0);
});

test('outside the period read there is no answer: the replay then asks PostgreSQL', async () => {
  const loaded = (await loadPeriodWindows(pool, site, new Date(onset), new Date(onset + H)))!;
  expect(loaded.current({ from: new Date(onset - M), to: new Date(onset + 14 * M) }, new Date(onset))).toBeNull();
  expect(loaded.current({ from: new Date(onset + 50 * M), to: new Date(onset + 61 * M) }, new Date(onset))).toBeNull();
});

test('a replay over in-memory windows equals one reading every window from PostgreSQL, tick for tick', async () => {
  const decisions = parseDecisionsFile([
    { at: new Date(onset + RESUME).toISOString(), kind: 'resume', who: 'alice@example.com', why: 'checked' },
  ]);
  if (!decisions.ok) throw new Error(decisions.message);
  const opts = {
    site,
    from: new Date(onset - H),
    to: new Date(onset + 3 * H),
    tickMs: M,
    config,
    decisions: decisions.decisions,
  };
  const assessed = (into: Array<TickAssessment | null>) => ({
    onTick: (_t: unknown, d: { assessed: TickAssessment | null }) => into.push(d.assessed),
  });
  const fast: Array<TickAssessment | null> = [];
  const slow: Array<TickAssessment | null> = [];
  const a = await replaySite(pool, { ...opts, ...assessed(fast) });
  const b = await replaySite(pool, { ...opts, ...assessed(slow), deps: { readWindows: memoisedReads().readWindows } });
  expect(a.ticks).toEqual(b.ticks);
  expect(fast).toEqual(slow);
  expect(JSON.stringify(fast)).toBe(JSON.stringify(slow));
  expect(a.summary).toEqual(b.summary);
  // The comparison is over ticks that matter: the dead pool is seen, the canaries counted, the burst pauses the
  // site, and the resume is applied — the windows after it start at the gate.
  expect(a.ticks.some((t) => t.routeVerdict === 'route-specific')).toBe(true);
  expect(fast.some((t) => (t?.crawlerCanaries?.failed ?? 0) > 0)).toBe(true);
  expect(a.ticks.some((t) => t.awaitingSince !== null)).toBe(true);
  expect(a.ticks.flatMap((t) => t.decisions)).toEqual([expect.stringContaining('resume by alice@example.com')]);
  const gated = fast.filter(
    (t) => t !== null && Date.parse(t.window.currentFrom) > Date.parse(t.assessedAt) - config.window.currentWindowMs,
  );
  expect(gated.length).toBeGreaterThan(0);
  expect(gated.every((t) => Date.parse(t!.window.currentFrom) >= onset + RESUME)).toBe(true);
}, 120_000);
