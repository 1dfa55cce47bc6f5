/**
 * Several workers started together on a new database (the cluster stack starts two at once) all apply
 * the migrations: one applies them, the others wait for its advisory lock and find nothing to do.
 * Three processes, as three workers would be (node-pg-migrate is an ES module: it runs from dist/, which
 * `npm test` builds first).
 */
import { randomUUID } from 'node:crypto';
import { createPool } from '../../server/db/pool';
import { migrateInProcess } from '../kit/processes';
import { env } from '../kit/services';

test('three concurrent migrateUp calls on an empty database: all succeed, each migration applied once', async () => {
  const shared = env('DATABASE_URL');
  const name = `th_migrate_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const admin = createPool(shared, 1);
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(shared);
  url.pathname = `/${name}`;
  try {
    const results = await Promise.all([
      migrateInProcess(url.toString()),
      migrateInProcess(url.toString()),
      migrateInProcess(url.toString()),
    ]);
    const applied = results.flat();
    expect(applied.length).toBeGreaterThan(5);
    expect(new Set(applied).size).toBe(applied.length);
    // Exactly one of the three applied them; the others had nothing left to do.
    expect(results.filter((r) => r.length > 0)).toHaveLength(1);
    const pool = createPool(url.toString(), 1);
    try {
      const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM pgmigrations');
      expect(Number(rows[0]!.n)).toBe(applied.length);
    } finally {
      await pool.end();
    }
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}, 120_000);
