/**
 * The least-privilege crawler role of docs/security.md on a real PostgreSQL: the doc's SQL is run as
 * written (only the role's name and password replaced), then a crawler records through the recorder's
 * `postgresSink` logged in as that role, into days that have no partitions yet, and sends it all again.
 * Everything lands once; the partitions are the owner's; the role's own DDL, deletes and reads outside
 * the ingest path are refused. Works in a private database: it creates roles and grants, and needs days
 * without partitions.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPool, type Pool } from '../../db/pool';
import { createIngester } from '../../db/signal-store/ingest';
import { forgetKnownPartitions, partitionName, partitionStart } from '../../db/signal-store/partitions';
import { createRecorder, postgresSink } from '../../recorder';
import { privateDatabase, type PrivateDatabase } from '../helpers/private-database';
import { env } from '../helpers/services';

const DAY = 86_400_000;
const QUIET = { info: () => undefined, warn: () => undefined, error: () => undefined };
const hex = (n: number) => randomBytes(n).toString('hex');

/** The first ```sql block of the doc's section "A least-privilege role for crawlers". */
function documentedSql(): string {
  const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'security.md'), 'utf8');
  const section = doc.slice(doc.indexOf('### A least-privilege role for crawlers'));
  const block = /```sql\n([\s\S]*?)```/.exec(section);
  if (!section.startsWith('###') || block === null) throw new Error('docs/security.md has no SQL block under "A least-privilege role for crawlers"');
  return block[1]!;
}

let db: PrivateDatabase;
const roles: string[] = [];
const pools: Pool[] = [];

/** A login role made by the documented SQL, and its DATABASE_URL. */
async function documentedRole(): Promise<{ role: string; url: string }> {
  const role = `th_crawler_${hex(4)}`;
  const password = hex(12);
  const sql = documentedSql();
  expect(sql).toContain("PASSWORD 'choose-a-password'");
  await db.pool.query(sql.replace(/\bth_crawler\b/g, role).replace("'choose-a-password'", `'${password}'`));
  roles.push(role);
  const url = new URL(db.url);
  url.username = role;
  url.password = password;
  return { role, url: url.toString() };
}

function poolAs(url: string): Pool {
  const pool = createPool(url, 2);
  pools.push(pool);
  return pool;
}

async function sqlState(work: Promise<unknown>): Promise<string> {
  try {
    await work;
  } catch (err) {
    return String((err as { code?: unknown }).code);
  }
  return 'succeeded';
}

beforeAll(async () => {
  db = await privateDatabase(env('DATABASE_URL'));
});

afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
  // The grants live in the private database: once it is gone, the roles can go.
  await db.drop();
  const shared = createPool(env('DATABASE_URL'), 1);
  try {
    for (const role of roles) await shared.query(`DROP ROLE IF EXISTS ${role}`);
  } finally {
    await shared.end();
  }
});

test('a crawler role with only the documented grants records through postgresSink; partitions are made for it; its DDL is refused', async () => {
  const { role, url } = await documentedRole();
  const site = `crawler-role-${hex(3)}.example.com`;
  const now = Date.now();
  const days = [now, now - 20 * DAY];
  const exists = async (name: string) => (await db.pool.query<{ r: string | null }>('SELECT to_regclass($1)::text AS r', [name])).rows[0]!.r !== null;
  // A fresh database: none of the partitions these events need exists yet.
  for (const t of days) expect(await exists(partitionName('request_events', partitionStart('day', t)))).toBe(false);
  forgetKnownPartitions();

  const errors: unknown[] = [];
  const record = async () => {
    const sink = postgresSink({ connectionString: url, logger: QUIET });
    const recorder = createRecorder({ sink, batchSize: 50, retryForMs: 5_000, onError: (err) => errors.push(err), logger: QUIET });
    for (let i = 0; i < 120; i++) {
      const ts = days[i % 2]! - 1_000 * i;
      recorder.record({ eventId: `e${i}`, ts, site, status: i % 4 === 0 ? 403 : 200, latencyMs: 40, route: { pool: 'dc' } });
    }
    await recorder.close();
    await sink.close();
    return recorder.stats();
  };
  expect(await record()).toMatchObject({ recorded: 120, stored: 120, duplicates: 0, failed: 0, dropped: 0 });
  // Sent again (a crawler resending after a timeout): the repeat path, which reads back what it inserted.
  forgetKnownPartitions();
  expect(await record()).toMatchObject({ recorded: 120, stored: 0, duplicates: 120, failed: 0, dropped: 0 });
  expect(errors).toEqual([]);

  const { rows } = await db.pool.query<{ raw: string; requests: string; minutes: string; blocks: string }>(
    `SELECT (SELECT count(*) FROM request_events WHERE site = $1) AS raw,
            (SELECT sum(requests) FROM rollup_hour WHERE site = $1 AND route_key = '*') AS requests,
            (SELECT sum(requests) FROM rollup_minute WHERE site = $1 AND route_key = '*') AS minutes,
            (SELECT sum(hard_blocks) FROM rollup_day WHERE site = $1 AND route_key = '*') AS blocks`,
    [site],
  );
  // The events of 20 days ago are older than the minute retention (TARGET_HEALTH_MINUTE_DAYS, 3 by
  // default): hour and day rows, no minute rows — those are the 60 of today.
  expect(rows[0]).toEqual({ raw: '120', requests: '120', minutes: '60', blocks: '30' });
  // The partitions exist now, and belong to the tables' owner, not to the crawler.
  const owner = (await db.pool.query<{ u: string }>("SELECT tableowner AS u FROM pg_tables WHERE tablename = 'request_events'")).rows[0]!.u;
  expect(owner).not.toBe(role);
  for (const t of days) {
    const name = partitionName('request_events', partitionStart('day', t));
    const { rows: owned } = await db.pool.query<{ tableowner: string }>('SELECT tableowner FROM pg_tables WHERE tablename = $1', [name]);
    expect(owned).toEqual([{ tableowner: owner }]);
  }

  const crawler = poolAs(url);
  expect((await crawler.query<{ u: string }>('SELECT current_user AS u')).rows[0]!.u).toBe(role);
  // The function's search_path is pinned: a temporary table of the caller's named like the store's is not
  // where the partition goes (temporary objects come first by default).
  const session = await crawler.connect();
  try {
    await session.query('CREATE TEMP TABLE request_events (ts timestamptz NOT NULL) PARTITION BY RANGE (ts)');
    expect((await session.query<{ p: string }>("SELECT th_ensure_partition('request_events', '2031-06-01T12:00:00Z') AS p")).rows).toEqual([{ p: 'request_events_p20310601' }]);
    await session.query('DROP TABLE pg_temp.request_events');
  } finally {
    session.release();
  }
  const { rows: parent } = await db.pool.query<{ parent: string; schema: string }>(
    `SELECT i.inhparent::regclass::text AS parent, n.nspname AS schema FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relname = 'request_events_p20310601'`,
  );
  expect(parent).toEqual([{ parent: 'request_events', schema: 'public' }]);

  // What the role may not do: DDL of its own, deletes, reads beyond what ingestion needs, other tables.
  const today = partitionName('request_events', partitionStart('day', now));
  expect({
    createTable: await sqlState(crawler.query('CREATE TABLE th_probe (a int)')),
    createPartition: await sqlState(crawler.query("CREATE TABLE request_events_p20310101 PARTITION OF request_events FOR VALUES FROM ('2031-01-01') TO ('2031-01-02')")),
    dropPartition: await sqlState(crawler.query(`DROP TABLE ${today}`)),
    truncate: await sqlState(crawler.query('TRUNCATE request_events')),
    deleteRollups: await sqlState(crawler.query('DELETE FROM rollup_day')),
    readRawEvents: await sqlState(crawler.query('SELECT latency_ms FROM request_events LIMIT 1')),
    readCanaries: await sqlState(crawler.query('SELECT definition FROM canaries LIMIT 1')),
    alterTable: await sqlState(crawler.query('ALTER TABLE request_events ADD COLUMN th_probe int')),
    updateSites: await sqlState(crawler.query("UPDATE sites SET config = '{}' WHERE site = 'x'")),
    readAssessments: await sqlState(crawler.query('SELECT * FROM assessments LIMIT 1')),
    readControls: await sqlState(crawler.query('SELECT * FROM site_controls LIMIT 1')),
    readAudit: await sqlState(crawler.query('SELECT * FROM control_audit LIMIT 1')),
    readDecisions: await sqlState(crawler.query('SELECT * FROM decisions LIMIT 1')),
    readNotifications: await sqlState(crawler.query('SELECT * FROM notifications LIMIT 1')),
    otherTable: await sqlState(crawler.query("SELECT th_ensure_partition('canaries', now())")),
  }).toEqual({
    createTable: '42501',
    createPartition: '42501',
    dropPartition: '42501',
    truncate: '42501',
    deleteRollups: '42501',
    readRawEvents: '42501',
    readCanaries: '42501',
    alterTable: '42501',
    updateSites: '42501',
    readAssessments: '42501',
    readControls: '42501',
    readAudit: '42501',
    readDecisions: '42501',
    readNotifications: '42501',
    otherTable: '22023',
  });
});

test('without EXECUTE on th_ensure_partition the role cannot make a missing partition, and the error names the grant', async () => {
  const { role, url } = await documentedRole();
  await db.pool.query(`REVOKE EXECUTE ON FUNCTION th_ensure_partition(text, timestamptz) FROM ${role}`);
  const t = Date.now() - 25 * DAY;
  forgetKnownPartitions();
  const ingester = createIngester(poolAs(url));
  let failure: unknown;
  try {
    await ingester.ingest([{ ts: t, site: `no-grant-${hex(3)}.example.com`, status: 200, latencyMs: 10 }]);
  } catch (err) {
    failure = err;
  }
  expect(failure).toMatchObject({ code: '42501' });
  expect((failure as Error).message).toMatch(/permission denied for function th_ensure_partition: this database role may not create the signal store's daily partitions; grant it EXECUTE ON FUNCTION th_ensure_partition\(text, timestamptz\) \(docs\/security\.md\)$/);
  expect((await db.pool.query<{ r: string | null }>('SELECT to_regclass($1)::text AS r', [partitionName('request_events', partitionStart('day', t))])).rows[0]!.r).toBeNull();
});
