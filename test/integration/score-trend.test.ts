/**
 * The sparklines' kept buckets (`assessment_score_buckets`, migration 015) equal the plain aggregate of
 * `assessments` (`scoreBucketsFromTicks`) on real PostgreSQL: after bulk and single inserts, idempotent
 * re-inserts, a tick written late into an old bucket, an update, a delete, TRUNCATE, and a history written
 * before the migration (rolled back and applied again: its backfill). A private database, as the test changes
 * rows other files do not expect to move.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MIGRATIONS_DIR } from '../../server/config/paths';
import { KEPT_BUCKET_MS, scoreBuckets, scoreBucketsFromTicks, type TrendBucketRow } from '../../server/db/score-trend';
import { trendRange, trendsFrom } from '../../server/fleet/trend';
import { privateDatabase, type PrivateDatabase } from '../kit/private-database';
import { env } from '../kit/services';

const MINUTE = 60_000;
const SITES = ['a.example.com', 'b.example.com', 'c.example.com'];
// Mid-bucket, so the range's last bucket is a partial one, as in production.
const NOW = new Date(Math.floor(Date.now() / KEPT_BUCKET_MS) * KEPT_BUCKET_MS - 5 * KEPT_BUCKET_MS + 7 * MINUTE);

let db: PrivateDatabase;
let key = 0;

interface Tick {
  site: string;
  at: Date;
  /** Null: an assessment without a score (learning, too little traffic). */
  score: number | null;
}

async function insert(ticks: readonly Tick[], keys?: readonly string[]): Promise<string[]> {
  const used = keys ? [...keys] : ticks.map(() => `k${++key}`);
  await db.pool.query(
    `INSERT INTO assessments (assessment_key, site, workflow_id, tick, assessed_at, result)
     SELECT k, s, 'site-health:' || s, 1, at,
            CASE WHEN score IS NULL THEN '{"assessment": {"state": "learning"}}'::jsonb
                 ELSE jsonb_build_object('assessment', jsonb_build_object('health', jsonb_build_object('score', score)))
            END
       FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::int[]) AS t(k, s, at, score)
     ON CONFLICT (assessment_key) DO NOTHING`,
    [used, ticks.map((t) => t.site), ticks.map((t) => t.at), ticks.map((t) => t.score)],
  );
  return used;
}

/** Ticks every `stepMs` over the 26 h before NOW (none after: NOW is the readers' now), scores pseudo-random. */
function history(site: string, stepMs: number, seed: number): Tick[] {
  const out: Tick[] = [];
  let x = seed;
  for (let t = NOW.getTime() - 26 * 60 * MINUTE; t < NOW.getTime(); t += stepMs) {
    x = (x * 48_271) % 2_147_483_647;
    out.push({ site, at: new Date(t), score: x % 11 === 0 ? null : x % 101 });
  }
  return out;
}

const sorted = (rows: readonly TrendBucketRow[]): TrendBucketRow[] =>
  [...rows].sort((a, b) => a.site.localeCompare(b.site) || a.bucket - b.bucket);

/** Both readers over NOW's range: the same buckets, the same tick counts, the same means; returns the kept ones. */
async function expectSame(): Promise<TrendBucketRow[]> {
  const range = trendRange(NOW);
  expect(range.from.getTime() % KEPT_BUCKET_MS).toBe(0); // so scoreBuckets sums the kept buckets
  const kept = sorted(await scoreBuckets(db.pool, [...SITES, 'none.example.com'], range));
  const plain = sorted(await scoreBucketsFromTicks(db.pool, [...SITES, 'none.example.com'], range));
  expect(kept.map(({ site, bucket, ticks }) => ({ site, bucket, ticks }))).toEqual(
    plain.map(({ site, bucket, ticks }) => ({ site, bucket, ticks })),
  );
  kept.forEach((k, i) => {
    const p = plain[i]!;
    if (p.mean === null) expect(k.mean).toBeNull();
    else expect(k.mean).toBeCloseTo(p.mean, 9);
  });
  expect(trendsFrom(kept, SITES, range)).toEqual(trendsFrom(plain, SITES, range));
  return kept;
}

beforeAll(async () => {
  db = await privateDatabase(env('DATABASE_URL'));
});
afterAll(async () => db.drop());

test('bulk and single inserts, re-inserts, a late tick, an update, a delete: the kept buckets follow', async () => {
  // A day of 60 s ticks in one statement, another site's 7 min ticks one by one, a third without scores.
  await insert(history(SITES[0]!, MINUTE, 7));
  for (const t of history(SITES[1]!, 7 * MINUTE, 11)) await insert([t]);
  await insert(history(SITES[2]!, 13 * MINUTE, 3).map((t) => ({ ...t, score: null })));
  const first = await expectSame();
  expect(first.filter((r) => r.site === SITES[0]).map((r) => r.bucket)).toEqual([...Array(20).keys()]);
  expect(first.filter((r) => r.site === SITES[2]).every((r) => r.mean === null)).toBe(true);

  // A retried write of rows already stored changes nothing.
  const again = await insert(
    history(SITES[0]!, MINUTE, 99).slice(0, 50),
    Array.from({ length: 50 }, (_, i) => `k${i + 1}`),
  );
  expect(again).toHaveLength(50);
  expect(await expectSame()).toEqual(first);

  // A tick written late (a retried activity keeps its scheduled time) lands in its old bucket.
  const tenHoursAgo = new Date(NOW.getTime() - 10 * 60 * MINUTE);
  const [late] = await insert([{ site: SITES[1]!, at: tenHoursAgo, score: 0 }]);
  const afterLate = await expectSame();
  const bucketOf = Math.floor((tenHoursAgo.getTime() - trendRange(NOW).from.getTime()) / trendRange(NOW).bucketMs);
  const was = first.find((r) => r.site === SITES[1] && r.bucket === bucketOf)!;
  const now = afterLate.find((r) => r.site === SITES[1] && r.bucket === bucketOf)!;
  expect(now.ticks).toBe(was.ticks + 1);
  expect(now.mean!).toBeLessThan(was.mean!);

  // Assessments are written once, but an update or a delete by hand is followed too.
  await db.pool.query(
    `UPDATE assessments SET result = '{"assessment": {"health": {"score": 100}}}' WHERE assessment_key = $1`,
    [late],
  );
  expect((await expectSame()).find((r) => r.site === SITES[1] && r.bucket === bucketOf)!.mean!).toBeGreaterThan(
    now.mean!,
  );
  await db.pool.query(`UPDATE assessments SET assessed_at = assessed_at - interval '3 hours' WHERE site = $1`, [
    SITES[1],
  ]);
  await expectSame();
  await db.pool.query('DELETE FROM assessments WHERE site = $1 AND assessed_at > $2', [SITES[0], tenHoursAgo]);
  const afterDelete = await expectSame();
  expect(afterDelete.filter((r) => r.site === SITES[0]).length).toBeLessThan(20);
  const { rows } = await db.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM assessment_score_buckets WHERE ticks <= 0',
  );
  expect(rows[0]!.n).toBe(0);
});

test('a history written before the migration is backfilled; TRUNCATE empties the buckets', async () => {
  // The migration's own SQL, down then up (node-pg-migrate, an ES module, runs outside Jest: test/kit/processes.ts).
  const [up, down] = readFileSync(join(MIGRATIONS_DIR, '014_assessment_score_buckets.sql'), 'utf8')
    .replace('-- Up Migration', '')
    .split('-- Down Migration');
  await db.pool.query(down!);
  await insert(history(SITES[2]!, 5 * MINUTE, 5));
  await db.pool.query(up!);
  const kept = await expectSame();
  expect(kept.filter((r) => r.site === SITES[2] && r.mean !== null)).toHaveLength(20);

  await db.pool.query('TRUNCATE assessments');
  expect(await expectSame()).toEqual([]);
  const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM assessment_score_buckets');
  expect(rows[0]!.n).toBe(0);
});
