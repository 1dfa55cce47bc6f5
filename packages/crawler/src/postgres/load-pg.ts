/**
 * `pg` is an optional peer dependency of the package: only this subpath (`@target-health/crawler/postgres`)
 * uses it, and loads it when a sink or client is made, so a crawler on the API sink never needs it.
 */
import type * as Pg from 'pg';
import { createRequire } from 'node:module';

let loaded: typeof Pg | undefined;

export function loadPg(what: string): typeof Pg {
  if (loaded) return loaded;
  try {
    loaded = createRequire(__filename)('pg') as typeof Pg;
  } catch (err) {
    const missing = (err as { code?: unknown }).code === 'MODULE_NOT_FOUND';
    const cause = err instanceof Error ? err.message : String(err);
    throw new Error(
      `${what}: ${missing ? 'needs the pg package (npm install pg)' : `cannot load the pg package (${cause})`}`,
    );
  }
  return loaded;
}
