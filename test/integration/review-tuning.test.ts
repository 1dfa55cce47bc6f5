/**
 * "What to tune" is honest, on two simulated challenge waves (`simulate --days 5` + `ingest`, the loop's history
 * around the wave recorded through its db functions as in review-cli.test.ts):
 *
 * - a store with no traffic in the half day before the wave (as after a back-fill that starts at the incident):
 *   every replay starts cold at the wave, so no candidate is a comparison and no headline comes out, only why;
 * - a candidate that degrades on normal traffic (healthy only at 99 or more): its false degrades over the site's
 *   quiet days are counted — against a replay of each quiet day made here — and it is not recommended; a day the
 *   live loop ran and degraded on is no quiet day.
 */
import { createPool, type Pool } from '../../server/db/pool';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { recordReplayAsHistory } from '../kit/chart-history';
import { renderReview } from '../../client/review/render';
import { type Review, reviewSchema } from '../../client/review/schema';
import { warmupMs } from '../../client/review/tune';
import { builtInCandidates } from '../../client/review/tune-figures';
import { parseSiteHealthInput, type SiteHealthConfig } from '../../core/control/config';
import { replaySite } from '../../tools/replay/engine';
import type { Controls } from '../../core/control/controls';
import { readControls, writeControls } from '../../server/db/controls';
import { CLI, cleanEnv, run } from '../kit/processes';
import { env } from '../kit/services';
import { simulateAndIngest } from '../kit/simulated-site';

const M = 60_000;
const H = 60 * M;
const DAY = 24 * H;
let pool: Pool;
const db = () => cleanEnv({ DATABASE_URL: env('DATABASE_URL') });

function defaults(site: string): SiteHealthConfig {
  const parsed = parseSiteHealthInput({ site, tickIntervalMs: M });
  if (!parsed.ok) throw new Error(parsed.message);
  const { carried: _carried, ...config } = parsed.value;
  return config;
}

/** A simulated wave with the loop's history around it, resumed by a person once it is over. */
async function wave(prefix: string, before?: (site: string, onset: number) => Promise<void>) {
  const s = await simulateAndIngest('challenge-wave', prefix, 5);
  const onset = Date.parse(s.truth.onset!);
  await before?.(s.site, onset);
  await recordReplayAsHistory(pool, {
    site: s.site,
    from: new Date(onset - 2 * H),
    to: new Date(onset + 7 * H),
    tickMs: M,
    decisions: [
      { at: new Date(onset + 5 * H + 40 * M).toISOString(), kind: 'resume', who: 'alice@example.com', why: 'over' },
    ],
  });
  return { ...s, onset };
}

async function reviewOf(site: string, onset: number, extra: string[] = []): Promise<Review> {
  const r = await run(
    CLI,
    ['review', site, '--incident', new Date(onset + H).toISOString(), '--json', '--no-chart', ...extra],
    db(),
  );
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return reviewSchema.parse(JSON.parse(r.stdout));
}

beforeAll(() => {
  pool = createPool(env('DATABASE_URL'), 2);
});
afterAll(async () => pool.end());

describe('a store with no traffic before the wave: no headline', () => {
  let doc: Review;
  let onset: number;

  beforeAll(async () => {
    let site: string;
    ({ site, onset } = await wave('cold', async (name, at) => {
      // The half day before the wave is gone from the minute and hour rollups the ticks read; the baseline (the
      // 14 days ending a day before) is kept, so the wave's first ticks are scored at once.
      for (const table of ['rollup_minute', 'rollup_hour'])
        await pool.query(`DELETE FROM ${table} WHERE site = $1 AND bucket >= $2 AND bucket < $3`, [
          name,
          new Date(at - 12 * H),
          new Date(Math.floor(at / M) * M),
        ]);
    }));
    doc = await reviewOf(site, onset, ['--quiet-days', '0']);
  }, 300_000);

  test('every candidate is no comparison, said with when the traffic starts', () => {
    const t = doc.tuning;
    expect(t.candidates.map((c) => c.name)).toEqual(['faster smoothing', 'earlier throttle']);
    for (const c of t.candidates) {
      const m = /^no comparison: the store has no traffic before (\S+) (\S+)Z to settle the smoothing /.exec(
        c.noComparison ?? '',
      );
      expect(m).not.toBeNull();
      // The replays' first score: at the wave's first minutes, after the gap the deletion made.
      const first = Date.parse(`${m![1]}T${m![2]}Z`);
      expect(first).toBeGreaterThanOrEqual(Math.floor(onset / M) * M);
      expect(first).toBeLessThanOrEqual(onset + 15 * M);
    }
  });

  test('no verdict, no headline but the reason, in the JSON and the Markdown', () => {
    const t = doc.tuning;
    expect(t.warnedEarliest).toBeNull();
    expect(t.throttledLeast).toBeNull();
    expect(t.headline.kind).toBe('no-comparison');
    expect(t.headline.candidate).toBeNull();
    const md = renderReview(doc);
    expect(md).toMatch(/\*\*Headline:\*\* no comparison: the store has no traffic before /);
    expect(md).not.toMatch(/would have warned .* earlier/);
    expect(md).not.toContain('**Warned earliest:**');
    expect(md).toContain('**Quiet days:** none replayed (skipped with --quiet-days 0)');
  });
});

describe('a candidate noisy on quiet days: its false degrades counted, not recommended', () => {
  let doc: Review;
  let site: string;
  let onset: number;
  let noisy: string;

  beforeAll(async () => {
    let dir: string;
    ({ site, onset, dir } = await wave('noisy'));
    noisy = join(dir, 'noisy.json');
    writeFileSync(noisy, JSON.stringify({ scoring: { bands: { healthyMin: 99 } } }));
    doc = await reviewOf(site, onset, ['--candidate', noisy, '--quiet-days', '2']);
  }, 300_000);

  test('quiet days: whole UTC days before the wave, judged by the replay (no live loop ran them)', () => {
    const q = doc.tuning.quietDays;
    expect(q.wanted).toBe(2);
    expect(q.tickMs).toBe(M);
    expect(q.days.length).toBe(2);
    const incidentDay = Math.floor(Date.parse(doc.window.from) / DAY) * DAY;
    for (const d of q.days) {
      expect(d.judgedBy).toBe('replay');
      expect(Date.parse(d.day)).toBeLessThan(incidentDay);
      expect(d.ticks).toBe(DAY / M);
      expect(2 * d.scoredTicks).toBeGreaterThanOrEqual(d.ticks);
    }
    // Most recent first: the days just before the incident's.
    expect(q.days.map((d) => Date.parse(d.day))).toEqual([incidentDay - DAY, incidentDay - 2 * DAY]);
    expect(q.current).toMatchObject({ degrades: 0, pauses: 0 });
  });

  test("the candidate's false degrades: as many as each quiet day's replay under it moves into a warning", async () => {
    const config = defaults(site);
    const candidate = { ...config, scoring: { ...config.scoring, bands: { ...config.scoring.bands, healthyMin: 99 } } };
    const warmup = warmupMs([config, ...builtInCandidates(config).map((c) => c.config), candidate]);
    // The review's warm-up is over the settings it replays: the current ones and the one candidate given.
    expect(warmupMs([config, candidate])).toBe(warmup);
    let moves = 0;
    for (const d of doc.tuning.quietDays.days) {
      const day = Date.parse(d.day);
      const r = await replaySite(pool, {
        site,
        from: new Date(day - warmup),
        to: new Date(day + DAY),
        tickMs: M,
        config: candidate,
      });
      const warn = (b: string | undefined) => b === 'degrading' || b === 'resisting';
      r.ticks.forEach((t, i) => {
        if (Date.parse(t.asOf) >= day && warn(t.band) && !warn(r.ticks[i - 1]?.band)) moves += 1;
      });
    }
    const c = doc.tuning.candidates[0]!;
    expect(c.name).toBe('noisy.json');
    expect(moves).toBeGreaterThan(0);
    expect(c.quiet).toMatchObject({ degrades: moves, addedDegrades: moves });
    expect(renderReview(doc)).toContain(`| noisy.json | ${moves} | `);
  }, 120_000);

  test('not recommended', () => {
    expect(doc.tuning.headline.kind).not.toBe('recommend');
    expect(doc.tuning.headline.kind).not.toBe('unchecked');
  });

  // Last: it adds a live loop's day to the store.
  test('a day the live loop ran is judged by its band changes: calm, quiet; degraded, left out', async () => {
    const [latest, before] = doc.tuning.quietDays.days.map((d) => Date.parse(d.day));
    // The live loop ran the latest quiet day, a tick a minute: judged by its band changes, calm. Then it turns out
    // to have degraded from 06:00 to 07:00 (far from the incident's search).
    await pool.query(
      `INSERT INTO assessments (assessment_key, site, workflow_id, chain_id, tick, assessed_at, result)
       SELECT $1 || '/live/' || i, $1, 'site-health:' || $1, 'live', i + 1, $2::timestamptz + i * interval '1 minute',
              '{"assessment": {"state": "scored", "health": {"score": 97}, "parser": {"score": null}, "reasons": []}}'
         FROM generate_series(0, 1439) AS i`,
      [site, new Date(latest!)],
    );
    const live = await reviewOf(site, onset, ['--candidate', noisy, '--quiet-days', '1']);
    expect(live.tuning.quietDays.days).toEqual([
      expect.objectContaining({ day: new Date(latest!).toISOString().slice(0, 10), judgedBy: 'live' }),
    ]);
    for (const [at, band] of [
      [latest! + 6 * H, 'degrading'],
      [latest! + 7 * H, 'healthy'],
    ] as const) {
      const actionKey = `${site}/live/scripted/${band}`;
      const next: Controls = {
        concurrencyLimit: band === 'healthy' ? 16 : 8,
        revisitMultiplier: 1,
        paused: false,
        canaryOnly: false,
        effectiveCostMultiplier: 1,
        band,
        reason: `scripted ${band}`,
      };
      await writeControls(
        pool,
        {
          site,
          workflowId: `site-health:${site}`,
          actionKey,
          next,
          changedFields: ['band', 'concurrencyLimit'],
          routeDiagnosis: null,
          assessmentKey: null,
          decisionKey: null,
          actor: 'control-loop',
        },
        await readControls(pool, site),
      );
      await pool.query('UPDATE control_audit SET changed_at = $2 WHERE action_key = $1', [actionKey, new Date(at)]);
    }
    const again = await reviewOf(site, onset, ['--candidate', noisy, '--quiet-days', '1']);
    const q = again.tuning.quietDays;
    expect(q.examined).toBe(2);
    expect(q.days).toEqual([expect.objectContaining({ day: new Date(before!).toISOString().slice(0, 10) })]);
    expect(q.shortfall).toBeNull();
  }, 240_000);
});
