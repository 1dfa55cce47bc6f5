/**
 * A private, migrated database on the shared test PostgreSQL, for a test file that changes the schema's
 * behaviour (e.g. a trigger that refuses some rows). DDL on the shared database takes locks on tables
 * that test files running in parallel are writing to — a deadlock waiting to happen — and a trigger
 * there would act on their rows too. Cloned from a template made by the global setup: instant.
 */
import { randomUUID } from 'node:crypto';
import { createPool, type Pool } from '../../server/db/pool';
import pg from 'pg';

const { escapeIdentifier } = pg;

export const TEMPLATE_DATABASE = 'th_test_template';

export interface PrivateDatabase {
  url: string;
  pool: Pool;
  drop(): Promise<void>;
}

export async function privateDatabase(sharedUrl: string): Promise<PrivateDatabase> {
  const name = `th_private_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const admin = createPool(sharedUrl, 1);
  try {
    // Owned as the template is (by the tables' owner; a clone is otherwise owned by whoever makes it).
    const { rows } = await admin.query<{ owner: string }>(
      'SELECT pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = $1',
      [TEMPLATE_DATABASE],
    );
    await admin.query(
      `CREATE DATABASE ${name} TEMPLATE ${TEMPLATE_DATABASE} OWNER ${escapeIdentifier(rows[0]!.owner)}`,
    );
  } finally {
    await admin.end();
  }
  const url = new URL(sharedUrl);
  url.pathname = `/${name}`;
  const pool = createPool(url.toString(), 4);
  return {
    url: url.toString(),
    pool,
    drop: async () => {
      await pool.end();
      const cleanup = createPool(sharedUrl, 1);
      try {
        await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await cleanup.end();
      }
    },
  };
}
