/** The `sites` registry: who owns each watched site. */
import type pg from 'pg';
import type { Pool } from './pool';

export interface SiteRecord {
  site: string;
  owner: string | null;
  parserOwner: string | null;
  createdAt: Date;
}

export async function upsertSite(
  pool: Pool,
  site: string,
  owners: { owner?: string; parserOwner?: string } = {},
): Promise<SiteRecord> {
  const { rows } = await pool.query<{
    site: string;
    owner: string | null;
    parser_owner: string | null;
    created_at: Date;
  }>(
    `INSERT INTO sites (site, owner, parser_owner) VALUES ($1, $2, $3)
     ON CONFLICT (site) DO UPDATE SET
       owner = COALESCE(EXCLUDED.owner, sites.owner),
       parser_owner = COALESCE(EXCLUDED.parser_owner, sites.parser_owner),
       updated_at = now()
     RETURNING site, owner, parser_owner, created_at`,
    [site, owners.owner ?? null, owners.parserOwner ?? null],
  );
  const row = rows[0]!;
  return { site: row.site, owner: row.owner, parserOwner: row.parser_owner, createdAt: row.created_at };
}

export async function findSite(pool: Pool, site: string): Promise<SiteRecord | undefined> {
  const { rows } = await pool.query<{
    site: string;
    owner: string | null;
    parser_owner: string | null;
    created_at: Date;
  }>('SELECT site, owner, parser_owner, created_at FROM sites WHERE site = $1', [site]);
  const row = rows[0];
  return row && { site: row.site, owner: row.owner, parserOwner: row.parser_owner, createdAt: row.created_at };
}

/**
 * The owners of a site, locked for the rest of the transaction (a row is created when the site has none),
 * for a change that reads them before it writes them (live reconfiguration).
 */
export async function lockSiteOwners(
  db: Pick<pg.PoolClient, 'query'>,
  site: string,
): Promise<{ owner: string | null; parserOwner: string | null }> {
  await db.query('INSERT INTO sites (site) VALUES ($1) ON CONFLICT (site) DO NOTHING', [site]);
  const { rows } = await db.query<{ owner: string | null; parser_owner: string | null }>(
    'SELECT owner, parser_owner FROM sites WHERE site = $1 FOR UPDATE',
    [site],
  );
  return { owner: rows[0]!.owner, parserOwner: rows[0]!.parser_owner };
}

/** Sets the owners given (others unchanged), inside the caller's transaction. */
export async function setSiteOwners(
  db: Pick<pg.PoolClient, 'query'>,
  site: string,
  owners: { owner?: string; parserOwner?: string },
): Promise<void> {
  await db.query(
    'UPDATE sites SET owner = COALESCE($2, owner), parser_owner = COALESCE($3, parser_owner), updated_at = ' +
      'now() WHERE site = $1',
    [site, owners.owner ?? null, owners.parserOwner ?? null],
  );
}

/** The site has stored traffic (day or hour rollups) or is registered: what commands and routes call known. */
export async function siteKnown(pool: Pool, site: string): Promise<boolean> {
  const { rows } = await pool.query<{ known: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM rollup_day WHERE site = $1) OR EXISTS (SELECT 1 FROM rollup_hour WHERE site = $1)
       OR EXISTS (SELECT 1 FROM sites WHERE site = $1) AS known`,
    [site],
  );
  return rows[0]?.known === true;
}
