/**
 * The least-privilege crawler role of docs/security.md on a real PostgreSQL: the doc's SQL is run as
 * written (only the role's name and password replaced), then a crawler logged in as that role records
 * through `postgresSink` (`@target-health/crawler/postgres`) into the event inbox, sends it all again, and
 * follows the controls with `createPostgresControlsClient`; the server's drainer (the owner's connections)
 * stores the batches, into days that have no partitions yet. Everything lands once; the role can neither
 * read nor change the inbox, nor touch the store. Works in a private database: it creates roles and
 * grants, and needs days without partitions.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPool, type Pool } from '../../server/db/pool';
import { createIngester } from '../../server/db/signal-store/ingest';
import { forgetKnownPartitions, partitionName, partitionStart } from '../../server/db/signal-store/partitions';
import { createRecorder } from '@target-health/crawler/recorder';
import { createPostgresControlsClient, postgresSink } from '@target-health/crawler/postgres';
import { startTestDrainer } from '../kit/inbox';
import { privateDatabase, type PrivateDatabase } from '../kit/private-database';
import { env, eventually } from '../kit/services';
import { joinRegExp } from '../kit/regexp';

const DAY = 86_400_000;
const QUIET = { info: () => undefined, warn: () => undefined, error: () => undefined };
const hex = (n: number) => randomBytes(n).toString('hex');

/** The first ```sql block of the doc's section "A least-privilege role for crawlers". */
function documentedSql(): string {
  const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'security.md'), 'utf8');
  const section = doc.slice(doc.indexOf('### A least-privilege role for crawlers'));
  const block = /```sql\n([\s\S]*?)```/.exec(section);
  if (!section.startsWith('###') || block === null)
    throw new Error('docs/security.md has no SQL block under "A least-privilege role for crawlers"');
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

test(
  'a crawler role with only the documented grants writes batches to the inbox and reads the controls view; the ' +
    'drainer stores them once; the store is out of its reach',
  async () => {
    const { role, url } = await documentedRole();
    const site = `crawler-role-${hex(3)}.example.com`;
    const now = Date.now();
    const days = [now, now - 20 * DAY];
    const exists = async (name: string) =>
      (await db.pool.query<{ r: string | null }>('SELECT to_regclass($1)::text AS r', [name])).rows[0]!.r !== null;
    // A fresh database: none of the partitions these events need exists yet.
    for (const t of days) expect(await exists(partitionName('request_events', partitionStart('day', t)))).toBe(false);
    forgetKnownPartitions();

    const errors: unknown[] = [];
    const rejected: unknown[] = [];
    const record = async () => {
      const sink = postgresSink({ connectionString: url, logger: QUIET });
      const recorder = createRecorder({
        sink,
        batchSize: 50,
        retryForMs: 5_000,
        onError: (err) => errors.push(err),
        onRejected: (r) => rejected.push(...r),
        logger: QUIET,
      });
      for (let i = 0; i < 120; i++) {
        const ts = days[i % 2]! - 1_000 * i;
        recorder.record({
          eventId: `e${i}`,
          ts,
          site,
          status: i % 4 === 0 ? 403 : 200,
          latencyMs: 40,
          route: { pool: 'dc' },
        });
      }
      // Refused by the sink itself (the package's schema), with the store's message: never written.
      recorder.record({ eventId: 'bad', ts: now, site, status: 99, latencyMs: 40 });
      await recorder.close();
      await sink.close();
      return recorder.stats();
    };
    // Nothing drains yet: the batches wait in the inbox (3 rows: 50 + 50 + 21 - the refused one).
    expect(await record()).toMatchObject({
      recorded: 121,
      stored: 120,
      duplicates: 0,
      rejected: 1,
      failed: 0,
      dropped: 0,
    });
    expect(
      (
        await db.pool.query<{ n: string; events: string }>(
          'SELECT count(*) AS n, sum(event_count) AS events FROM event_inbox',
        )
      ).rows[0],
    ).toEqual({ n: '3', events: '120' });
    expect(rejected).toEqual([{ line: 21, errors: [expect.stringMatching(/^status: /)] }]);
    // Sent again (a crawler resending after a timeout): the same rows, skipped (ON CONFLICT DO NOTHING).
    expect(await record()).toMatchObject({
      recorded: 121,
      stored: 0,
      duplicates: 120,
      rejected: 1,
      failed: 0,
      dropped: 0,
    });
    expect((await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM event_inbox')).rows[0]!.n).toBe('3');
    expect(errors).toEqual([]);

    const drainer = startTestDrainer(db.pool);
    try {
      await drainer.drained();
    } finally {
      await drainer.close();
    }
    expect(drainer.results.map((r) => r.rejected.length)).toEqual([0, 0, 0]);
    expect(drainer.results.reduce((n, r) => n + r.inserted, 0)).toBe(120);
    // A batch drained twice (a drainer that died between storing and deleting it) stores nothing twice.
    const again = await createIngester(db.pool, { minuteDays: 3 }).ingest(
      Array.from({ length: 120 }, (_, i) => ({
        eventId: `e${i}`,
        ts: days[i % 2]! - 1_000 * i,
        site,
        status: i % 4 === 0 ? 403 : 200,
        latencyMs: 40,
        route: { pool: 'dc' },
      })),
    );
    expect(again).toMatchObject({ inserted: 0, duplicates: 120 });

    const { rows } = await db.pool.query<{ raw: string; requests: string; minutes: string; blocks: string }>(
      `SELECT (SELECT count(*) FROM request_events WHERE site = $1) AS raw,
            (SELECT sum(requests) FROM rollup_hour WHERE site = $1 AND route_key = '*') AS requests,
            (SELECT sum(requests) FROM rollup_minute WHERE site = $1 AND route_key = '*') AS minutes,
            (SELECT sum(hard_blocks) FROM rollup_day WHERE site = $1 AND route_key = '*') AS blocks`,
      [site],
    );
    // The events of 20 days ago are older than the minute retention (3 days): hour and day rows, no minute
    // rows — those are the 60 of today.
    expect(rows[0]).toEqual({ raw: '120', requests: '120', minutes: '60', blocks: '30' });
    // The partitions exist now, and belong to the tables' owner, not to the crawler.
    const owner = (
      await db.pool.query<{ u: string }>("SELECT tableowner AS u FROM pg_tables WHERE tablename = 'request_events'")
    ).rows[0]!.u;
    expect(owner).not.toBe(role);
    for (const t of days) {
      const name = partitionName('request_events', partitionStart('day', t));
      const { rows: owned } = await db.pool.query<{ tableowner: string }>(
        'SELECT tableowner FROM pg_tables WHERE tablename = $1',
        [name],
      );
      expect(owned).toEqual([{ tableowner: owner }]);
    }

    // The controls, as the role reads them: the view (LISTEN needs no grant), a change arriving by NOTIFY.
    await db.pool.query(
      `INSERT INTO site_controls (site, concurrency_limit, revisit_multiplier, paused, canary_only,
                                 effective_cost_multiplier, band, reason, workflow_id, version, updated_by)
     VALUES ($1, 4, 1, false, false, 1, 'healthy', 'ok', 'wf', 1, 'test')`,
      [site],
    );
    const controls = createPostgresControlsClient({ connectionString: url, sites: [site], logger: QUIET });
    try {
      await controls.ready();
      expect(controls.controlsFor(site)).toMatchObject({ site, concurrencyLimit: 4, paused: false, version: 1 });
      await db.pool.query(
        "UPDATE site_controls SET paused = true, band = 'resisting', version = version + 1 WHERE site = $1",
        [site],
      );
      await eventually(
        () => Promise.resolve(controls.controlsFor(site)?.version === 2 ? true : undefined),
        'the changed controls, notified',
      );
      expect(controls.controlsFor(site)).toMatchObject({ paused: true, band: 'resisting', version: 2 });
    } finally {
      await controls.close();
    }

    const crawler = poolAs(url);
    expect((await crawler.query<{ u: string }>('SELECT current_user AS u')).rows[0]!.u).toBe(role);
    // What the role may not do: read or change the inbox (other crawlers' batches), anything of the store.
    const today = partitionName('request_events', partitionStart('day', now));
    expect({
      readInbox: await sqlState(crawler.query('SELECT batch_id FROM event_inbox LIMIT 1')),
      deleteInbox: await sqlState(crawler.query('DELETE FROM event_inbox')),
      updateInbox: await sqlState(crawler.query("UPDATE event_inbox SET events = ''")),
      truncateInbox: await sqlState(crawler.query('TRUNCATE event_inbox')),
      insertRawEvents: await sqlState(
        crawler.query(
          "INSERT INTO request_events (ts, site, status, latency_ms, outcome, rule) VALUES (now(), 'x', 200, 1, " +
            "'ok', 'status')",
        ),
      ),
      readRawEvents: await sqlState(crawler.query('SELECT site FROM request_events LIMIT 1')),
      readRollups: await sqlState(crawler.query('SELECT requests FROM rollup_day LIMIT 1')),
      readNorms: await sqlState(crawler.query('SELECT * FROM page_norms_day LIMIT 1')),
      readSites: await sqlState(crawler.query('SELECT config FROM sites LIMIT 1')),
      makePartition: await sqlState(
        crawler.query("SELECT th_ensure_partition('request_events', '2031-06-01T12:00:00Z')"),
      ),
      createTable: await sqlState(crawler.query('CREATE TABLE th_probe (a int)')),
      dropPartition: await sqlState(crawler.query(`DROP TABLE ${today}`)),
      alterTable: await sqlState(crawler.query('ALTER TABLE event_inbox ADD COLUMN th_probe int')),
      readCanaries: await sqlState(crawler.query('SELECT definition FROM canaries LIMIT 1')),
      readAssessments: await sqlState(crawler.query('SELECT * FROM assessments LIMIT 1')),
      readControlsTable: await sqlState(crawler.query('SELECT route_diagnosis FROM site_controls LIMIT 1')),
      changeControls: await sqlState(crawler.query('UPDATE crawler_controls SET paused = false')),
      readAudit: await sqlState(crawler.query('SELECT * FROM control_audit LIMIT 1')),
      readDecisions: await sqlState(crawler.query('SELECT * FROM decisions LIMIT 1')),
      readNotifications: await sqlState(crawler.query('SELECT * FROM notifications LIMIT 1')),
      readTokens: await sqlState(crawler.query('SELECT * FROM api_tokens LIMIT 1')),
    }).toEqual({
      readInbox: '42501',
      deleteInbox: '42501',
      updateInbox: '42501',
      truncateInbox: '42501',
      insertRawEvents: '42501',
      readRawEvents: '42501',
      readRollups: '42501',
      readNorms: '42501',
      readSites: '42501',
      makePartition: '42501',
      createTable: '42501',
      dropPartition: '42501',
      alterTable: '42501',
      readCanaries: '42501',
      readAssessments: '42501',
      readControlsTable: '42501',
      changeControls: '42501',
      readAudit: '42501',
      readDecisions: '42501',
      readNotifications: '42501',
      readTokens: '42501',
    });
  },
);

/**
 * The rights the store's own ingester needs (the server's, `target-health ingest`): not the crawler role's any more.
 */
const INGESTER_GRANTS = (role: string) => `
GRANT SELECT (site, config) ON sites TO ${role};
GRANT INSERT, SELECT (site, event_id, ts) ON request_events TO ${role};
GRANT SELECT, INSERT, UPDATE ON rollup_minute, rollup_hour, rollup_day, page_norms_day TO ${role};`;

test(
  'a role that runs the ingester without EXECUTE on th_ensure_partition cannot make a missing partition, and the ' +
    'error names the grant',
  async () => {
    const { role, url } = await documentedRole();
    await db.pool.query(INGESTER_GRANTS(role));
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
    expect((failure as Error).message).toMatch(
      joinRegExp(
        /permission denied for function th_ensure_partition: this database role /,
        /may not create the signal store's daily partitions; grant it EXECUTE ON /,
        /FUNCTION th_ensure_partition\(text, timestamptz\) \(docs\/security\.md\)$/,
      ),
    );
    expect(
      (
        await db.pool.query<{ r: string | null }>('SELECT to_regclass($1)::text AS r', [
          partitionName('request_events', partitionStart('day', t)),
        ])
      ).rows[0]!.r,
    ).toBeNull();
  },
);
