/**
 * Bounded cardinality per site: at most `routesPerDay` route keys and `pageTypesPerDay` page types of
 * one site keep their own rollup and norm rows per UTC day; the rest fold into the site's `other` row
 * (aggregate.ts). Without a cap, one crawler sending a new proxy pool per request made a rollup row per
 * request (100,000 pools → 300,000 rows, ingest 6× slower) and every tick of that site read them all.
 * Raw events keep their true labels.
 *
 * The cap is exact across concurrent ingesters (CLI worker threads, recorders, other processes): a key
 * is admitted only inside the batch's transaction while holding an advisory lock on (site, day), after
 * reading what is already stored; the lock is held until commit, so the next admitter sees it. The lock
 * is taken only when a batch brings a key this ingester has not seen for that site and day and the
 * cap is not reached yet — the steady state (known routes) costs no query at all.
 */
import type { PoolClient } from 'pg';
import { ALL_ROUTES, OTHER_PAGE_TYPE, OTHER_ROUTES, type DayKeys, type KeepKey } from './aggregate';

export interface CardinalityCaps {
  /** Route keys (country|pool|session) per site and UTC day with their own rollup rows. */
  routesPerDay: number;
  /** Page types per site and UTC day with their own norm rows. */
  pageTypesPerDay: number;
}

export const DEFAULT_CARDINALITY_CAPS: CardinalityCaps = { routesPerDay: 250, pageTypesPerDay: 100 };

type Kind = 'routes' | 'pageTypes';

/** Keys of one (site, day) known to be stored: committed before, or by this ingester. */
type Known = Record<Kind, Set<string>>;

/** The keys a transaction may write, and what to remember once it commits. */
export interface Admission {
  keepRoute: KeepKey;
  keepPageType: KeepKey;
  /** After COMMIT: remember the keys this transaction wrote (only then are they visible to others). */
  committed(written: { routes: Map<string, DayKeys>; pageTypes: Map<string, DayKeys> }): void;
}

/** Keys remembered per ingester before the memory is cleared (it is only a cache: ~100 bytes a key). */
const MAX_REMEMBERED_KEYS = 200_000;

const id = (site: string, day: number): string => `${site}\u0000${day}`;

export class CardinalityGuard {
  private readonly known = new Map<string, Known>();
  private rememberedKeys = 0;

  constructor(private readonly caps: CardinalityCaps = DEFAULT_CARDINALITY_CAPS) {}

  private cap(kind: Kind): number {
    return kind === 'routes' ? this.caps.routesPerDay : this.caps.pageTypesPerDay;
  }

  /** Whether a batch's keys need the database: some key is new here and there is room left. */
  private needsLock(entryId: string, wanted: Partial<Record<Kind, DayKeys>>): boolean {
    const known = this.known.get(entryId);
    for (const kind of ['routes', 'pageTypes'] as const) {
      const keys = wanted[kind]?.keys;
      if (!keys) continue;
      if (!known) return true;
      if (known[kind].size >= this.cap(kind)) continue;
      for (const key of keys) if (!known[kind].has(key)) return true;
    }
    return false;
  }

  /** Decides, inside the batch's transaction, which route keys and page types keep their own rows. */
  async admit(client: PoolClient, routes: Map<string, DayKeys>, pageTypes: Map<string, DayKeys>): Promise<Admission> {
    // Per (site, day): the keys allowed (known ∪ newly admitted), and what the database held when read.
    const allowed = new Map<string, Known>();
    const read = new Map<string, Known>();
    const entries = [...new Set([...routes.keys(), ...pageTypes.keys()])].sort();
    for (const entryId of entries) {
      const wanted = { routes: routes.get(entryId), pageTypes: pageTypes.get(entryId) };
      const { site, day } = (wanted.routes ?? wanted.pageTypes)!;
      // First sight of this site and day: what is stored already needs no lock to read (it stays stored).
      if (!this.known.has(entryId)) {
        const stored = await storedKeys(client, site, day);
        read.set(entryId, stored);
        this.remember(entryId, stored);
      }
      const known = this.known.get(entryId);
      if (!this.needsLock(entryId, wanted)) {
        if (known) allowed.set(entryId, known);
        continue;
      }
      // Locks in sorted order (entries are sorted): two batches never wait for each other in a cycle.
      await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
        `target-health:cardinality:${site}:${day}`,
      ]);
      const stored = await storedKeys(client, site, day);
      read.set(entryId, stored);
      const decided: Known = { routes: new Set(stored.routes), pageTypes: new Set(stored.pageTypes) };
      for (const kind of ['routes', 'pageTypes'] as const) {
        for (const key of known?.[kind] ?? []) decided[kind].add(key);
        // Sorted: which keys win a crowded batch does not depend on the order lines arrived in.
        for (const key of [...(wanted[kind]?.keys ?? [])].sort()) {
          if (decided[kind].size >= this.cap(kind)) break;
          decided[kind].add(key);
        }
      }
      allowed.set(entryId, decided);
    }
    const keep =
      (kind: Kind): KeepKey =>
      (site, day, key) =>
        allowed.get(id(site, day))?.[kind].has(key) ?? false;
    return {
      keepRoute: keep('routes'),
      keepPageType: keep('pageTypes'),
      committed: (written) => {
        // Stored now: what the database held when read, and what this transaction wrote (admitted keys
        // whose events all turned out to be repeats were not written: not remembered).
        for (const entryId of new Set([...read.keys(), ...written.routes.keys(), ...written.pageTypes.keys()])) {
          this.remember(entryId, {
            routes: new Set([...(read.get(entryId)?.routes ?? []), ...(written.routes.get(entryId)?.keys ?? [])]),
            pageTypes: new Set([
              ...(read.get(entryId)?.pageTypes ?? []),
              ...(written.pageTypes.get(entryId)?.keys ?? []),
            ]),
          });
        }
      },
    };
  }

  private remember(entryId: string, keys: Known): void {
    if (this.rememberedKeys > MAX_REMEMBERED_KEYS) this.forget();
    const known = this.known.get(entryId) ?? { routes: new Set<string>(), pageTypes: new Set<string>() };
    const before = known.routes.size + known.pageTypes.size;
    for (const key of keys.routes) known.routes.add(key);
    for (const key of keys.pageTypes) known.pageTypes.add(key);
    this.rememberedKeys += known.routes.size + known.pageTypes.size - before + (this.known.has(entryId) ? 0 : 1);
    this.known.set(entryId, known);
  }

  /** Forget everything (tests that drop data behind the ingester's back). */
  forget(): void {
    this.known.clear();
    this.rememberedKeys = 0;
  }
}

/** The route keys and page types stored for a site and day (the all-routes and folded rows aside). */
async function storedKeys(client: PoolClient, site: string, day: number): Promise<Known> {
  const at = new Date(day);
  const [routes, pageTypes] = [
    await client.query<{ key: string }>(
      'SELECT route_key AS key FROM rollup_day WHERE site = $1 AND bucket = $2 AND route_key <> $3 AND route_key <> $4',
      [site, at, ALL_ROUTES, OTHER_ROUTES],
    ),
    await client.query<{ key: string }>(
      'SELECT page_type AS key FROM page_norms_day WHERE site = $1 AND day = $2 AND page_type <> $3',
      [site, at.toISOString().slice(0, 10), OTHER_PAGE_TYPE],
    ),
  ];
  return { routes: new Set(routes.rows.map((r) => r.key)), pageTypes: new Set(pageTypes.rows.map((r) => r.key)) };
}
