/**
 * The controls the API serves, held in memory and kept current by PostgreSQL itself: one dedicated
 * connection (not from the pool: a LISTEN must outlive any one query) listens on `th_controls`, which
 * the `site_controls` trigger notifies with `{site, version}` on every change (server/db/migrations/006_api.sql).
 *
 * - A site is loaded on its first request (one query) and then answered from memory: a crawler polling
 *   with `If-None-Match` costs no database round trip.
 * - A notification re-reads that site's row (notifications arriving together are read in one query),
 *   so the cost is one query per change, not per poll; every change gets an event id (`seq`), goes into
 *   a bounded ring (for `Last-Event-ID` resumes) and to the listeners (SSE streams, long-poll waiters).
 * - The connection can drop (PostgreSQL restarted, the backend killed). Until it is back the cache is not
 *   trusted (reads go to the database); after reconnecting and LISTENing again, every cached site is
 *   re-read — notifications sent in between are lost — and the stream is told there was a gap: ids from
 *   before it are no longer resumable, and open streams get a fresh snapshot.
 */
import pg from 'pg';
import { z } from 'zod';
import { readControlsOf, type SiteControlsRecord } from '../db/controls';
import type { Pool } from '../db/pool';
import type { Logger } from '../logging/logger';

export const CONTROLS_CHANNEL = 'th_controls';
/** The listener's `application_name` (visible in pg_stat_activity; the tests find its backend by it). */
export const FEED_APPLICATION_NAME = 'target-health-api-controls-feed';

export interface ControlsChange {
  /** The event id: grows by one per change, across all sites. */
  seq: number;
  site: string;
  record: SiteControlsRecord;
}

export interface ControlsFeedOptions {
  pool: Pool;
  logger: Logger;
  /** Changes kept for `Last-Event-ID` resumes (default 10,000). */
  ringSize?: number;
  /** Reconnect backoff: first wait, doubled per failure up to the maximum. */
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
}

export interface ControlsFeedStatus {
  /** Listening and resynchronised: the cache is trusted. */
  live: boolean;
  /** Successful reconnections after a lost connection. */
  reconnects: number;
  cachedSites: number;
  /** Queries this feed ran (loads, change reads, resyncs, snapshots). */
  queries: number;
  notifications: number;
  /** Listeners of single sites (long-polls waiting). */
  waiting: number;
}

/**
 * `since(lastId)`: the changes after it, or `gap` when they are not all known (too old, another process, a reconnect).
 */
export type Resume = { kind: 'events'; events: ControlsChange[] } | { kind: 'gap' };

const notificationSchema = z.object({ site: z.string(), version: z.number().int() });
/**
 * Sites known to have no controls are cached too (a crawler polling before its loop starts costs no query), up to this
 * many.
 */
const MAX_ABSENT_CACHED = 10_000;

export class ControlsFeed {
  private readonly pool: Pool;
  private readonly log: Logger;
  private readonly ringSize: number;
  private readonly reconnectMinMs: number;
  private readonly reconnectMaxMs: number;

  /** site → its record, or null when it has none. */
  private readonly cache = new Map<string, SiteControlsRecord | null>();
  private absentCached = 0;
  private readonly loading = new Map<string, Promise<SiteControlsRecord | null>>();

  private readonly ring: Array<ControlsChange | undefined>;
  /**
   * Event ids start at the start time in ms × 1000: ids given by an earlier process (or held by a client
   * across a restart) are older than this process's, so they ask for a snapshot instead of a replay.
   */
  private seq = Date.now() * 1000;
  /** A `Last-Event-ID` below this cannot be resumed (a reconnect may have lost changes). */
  private resumableFrom = this.seq;

  private readonly changeListeners = new Set<(change: ControlsChange) => void>();
  private readonly gapListeners = new Set<() => void>();
  private readonly siteListeners = new Map<string, Set<(record: SiteControlsRecord) => void>>();

  private client: pg.Client | null = null;
  /** Changes with every connection attempt: a read started before a reconnect is not cached. */
  private epoch = 0;
  private listening = false;
  private live = false;
  private everLive = false;
  private closed = false;
  private failures = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;

  private readonly pending = new Set<string>();
  private flushScheduled = false;
  private flushing = false;
  private retryTimer: NodeJS.Timeout | undefined;

  private readonly counters = { reconnects: 0, queries: 0, notifications: 0 };

  constructor(options: ControlsFeedOptions) {
    this.pool = options.pool;
    this.log = options.logger.child({ component: 'controls-feed' });
    this.ringSize = options.ringSize ?? 10_000;
    this.reconnectMinMs = options.reconnectMinMs ?? 250;
    this.reconnectMaxMs = options.reconnectMaxMs ?? 5_000;
    this.ring = new Array<ControlsChange | undefined>(this.ringSize);
  }

  /** Connects and listens; a failure is logged and retried in the background (reads go to the database meanwhile). */
  async start(): Promise<void> {
    await this.connect();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = null;
    this.live = false;
    this.listening = false;
    this.changeListeners.clear();
    this.gapListeners.clear();
    this.siteListeners.clear();
    if (client !== null) await client.end().catch(() => undefined);
  }

  status(): ControlsFeedStatus {
    return {
      live: this.live,
      reconnects: this.counters.reconnects,
      cachedSites: this.cache.size,
      queries: this.counters.queries,
      notifications: this.counters.notifications,
      waiting: [...this.siteListeners.values()].reduce((n, set) => n + set.size, 0),
    };
  }

  /** The latest event id given. */
  currentSeq(): number {
    return this.seq;
  }

  /** The cached record (null: the site has none) when the cache is trusted; undefined when a read is needed. */
  peek(site: string): SiteControlsRecord | null | undefined {
    return this.live ? this.cache.get(site) : undefined;
  }

  /** The site's record (null: none yet): from memory when trusted, else one query (shared by concurrent callers). */
  async get(site: string): Promise<SiteControlsRecord | null> {
    const cached = this.peek(site);
    if (cached !== undefined) return cached;
    let load = this.loading.get(site);
    if (load === undefined) {
      load = this.load(site).finally(() => this.loading.delete(site));
      this.loading.set(site, load);
    }
    return load;
  }

  /** The current records of these sites (null: every site), and the event id they are current as of. */
  async snapshot(sites: readonly string[] | null): Promise<{ seq: number; records: SiteControlsRecord[] }> {
    const seq = this.seq;
    if (sites !== null && this.live && sites.every((s) => this.cache.has(s))) {
      return {
        seq,
        records: sites
          .map((s) => this.cache.get(s))
          .filter((r): r is SiteControlsRecord => r !== null && r !== undefined),
      };
    }
    const trusted = this.listening;
    const epoch = this.epoch;
    const records = await this.readSites(sites);
    if (trusted && epoch === this.epoch) for (const r of records) this.remember(r);
    return { seq, records };
  }

  /** Changes after `lastId`, or a gap when some of them are not in the ring (or `lastId` is not one of ours). */
  since(lastId: number): Resume {
    const oldestResumable = Math.max(this.resumableFrom, this.seq - this.ringSize);
    if (!Number.isSafeInteger(lastId) || lastId < oldestResumable || lastId > this.seq) return { kind: 'gap' };
    const events: ControlsChange[] = [];
    for (let s = lastId + 1; s <= this.seq; s++) events.push(this.ring[s % this.ringSize]!);
    return { kind: 'events', events };
  }

  /** Every change, as it is applied. Returns the unsubscribe function. */
  onChange(listener: (change: ControlsChange) => void): () => void {
    this.changeListeners.add(listener);
    return () => void this.changeListeners.delete(listener);
  }

  /** After a reconnect: changes may have been missed, so a stream should send a fresh snapshot. */
  onGap(listener: () => void): () => void {
    this.gapListeners.add(listener);
    return () => void this.gapListeners.delete(listener);
  }

  /** One site's changes (long-poll waiters): no cost per change for the other sites' waiters. */
  onSite(site: string, listener: (record: SiteControlsRecord) => void): () => void {
    let set = this.siteListeners.get(site);
    if (set === undefined) this.siteListeners.set(site, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.siteListeners.get(site) === set) this.siteListeners.delete(site);
    };
  }

  // ---- connection ----

  private async connect(): Promise<void> {
    if (this.closed) return;
    const epoch = ++this.epoch;
    const client = new pg.Client({ ...this.pool.options, application_name: FEED_APPLICATION_NAME, keepAlive: true });
    this.client = client;
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client));
    client.on('notification', (msg) => this.onNotification(msg));
    try {
      await client.connect();
      await client.query(`LISTEN ${CONTROLS_CHANNEL}`);
      if (this.client !== client || epoch !== this.epoch) return;
      this.listening = true;
      // Notifications sent while we were away are lost: read every cached site again.
      await this.resync();
      if (this.client !== client || epoch !== this.epoch) return;
      this.live = true;
      this.failures = 0;
      if (this.everLive) {
        this.counters.reconnects += 1;
        // Sites nobody asked for may have changed too: no id from before is resumable, open streams re-snapshot.
        this.resumableFrom = this.seq;
        for (const listener of this.gapListeners) this.safely(() => listener());
        this.log.info({ reconnects: this.counters.reconnects }, 'controls feed: listening again; cached sites re-read');
      }
      this.everLive = true;
    } catch (err) {
      this.lost(client, err);
    }
  }

  private lost(client: pg.Client, err?: unknown): void {
    if (this.client !== client) return;
    this.client = null;
    this.listening = false;
    this.live = false;
    this.epoch += 1;
    client.removeAllListeners('notification');
    // Keep an error listener: a late socket error on the dead client must not crash the process.
    client.on('error', () => undefined);
    void client.end().catch(() => undefined);
    if (this.closed) return;
    const delay = Math.min(this.reconnectMaxMs, this.reconnectMinMs * 2 ** this.failures);
    this.failures += 1;
    this.log.warn(
      { err: err instanceof Error ? err.message : undefined, retryInMs: delay },
      'controls feed: lost the PostgreSQL listener; reads go to the database until it is back',
    );
    this.reconnectTimer = setTimeout(() => void this.connect(), delay);
    this.reconnectTimer.unref();
  }

  private async resync(): Promise<void> {
    // Cached sites, and sites a long-poll waits on (read while the cache was not trusted, so not cached).
    const sites = [...new Set([...this.cache.keys(), ...this.siteListeners.keys()])];
    if (sites.length === 0) return;
    const records = await this.readSites(sites);
    const found = new Set<string>();
    for (const r of records) {
      found.add(r.site);
      this.apply(r);
    }
    for (const site of sites) if (!found.has(site) && this.cache.has(site)) this.rememberAbsent(site);
  }

  // ---- notifications ----

  private onNotification(msg: pg.Notification): void {
    if (msg.channel !== CONTROLS_CHANNEL || msg.payload === undefined) return;
    this.counters.notifications += 1;
    let parsed: z.output<typeof notificationSchema>;
    try {
      parsed = notificationSchema.parse(JSON.parse(msg.payload));
    } catch {
      this.log.warn(
        { payload: msg.payload.slice(0, 200) },
        'controls feed: ignored a malformed th_controls notification',
      );
      return;
    }
    const cached = this.cache.get(parsed.site);
    if (cached && cached.version >= parsed.version) return;
    this.pending.add(parsed.site);
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || this.closed) return;
    this.flushScheduled = true;
    // setImmediate: notifications of one burst (one transaction, many sites) are read in one query.
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    this.flushScheduled = false;
    if (this.flushing || this.pending.size === 0 || this.closed) return;
    const sites = [...this.pending];
    this.pending.clear();
    this.flushing = true;
    let failed = false;
    try {
      for (const r of await this.readSites(sites)) this.apply(r);
    } catch (err) {
      failed = true;
      for (const s of sites) this.pending.add(s);
      this.log.warn(
        { err: err instanceof Error ? err.message : String(err), sites: sites.length },
        'controls feed: could not read changed controls; retrying in 1 s',
      );
      this.retryTimer = setTimeout(() => this.scheduleFlush(), 1_000);
      this.retryTimer.unref();
    } finally {
      this.flushing = false;
    }
    if (!failed && this.pending.size > 0) this.scheduleFlush();
  }

  // ---- the cache ----

  private async load(site: string): Promise<SiteControlsRecord | null> {
    const trusted = this.listening;
    const epoch = this.epoch;
    const [record] = await this.readSites([site]);
    // Cache only what was read while listening on the same connection: a change after it is notified.
    if (trusted && epoch === this.epoch) {
      if (record === undefined) this.rememberAbsent(site);
      else this.remember(record);
    }
    return record ?? null;
  }

  /** A record read on request: cached silently when new to the cache, applied as a change when newer. */
  private remember(record: SiteControlsRecord): void {
    const cached = this.cache.get(record.site);
    if (cached === undefined) this.cache.set(record.site, record);
    else this.apply(record);
  }

  private rememberAbsent(site: string): void {
    const cached = this.cache.get(site);
    if (cached === null) return;
    if (this.absentCached >= MAX_ABSENT_CACHED) {
      for (const [s, r] of this.cache) if (r === null) this.cache.delete(s);
      this.absentCached = 0;
    }
    this.cache.set(site, null);
    this.absentCached += 1;
  }

  /** A record newer than the cached one becomes a change: cached, numbered, kept in the ring, announced. */
  private apply(record: SiteControlsRecord): void {
    const cached = this.cache.get(record.site);
    if (cached && cached.version >= record.version) return;
    if (cached === null) this.absentCached -= 1;
    this.cache.set(record.site, record);
    const change: ControlsChange = { seq: ++this.seq, site: record.site, record };
    this.ring[change.seq % this.ringSize] = change;
    for (const listener of this.changeListeners) this.safely(() => listener(change));
    for (const listener of this.siteListeners.get(record.site) ?? []) this.safely(() => listener(record));
  }

  private async readSites(sites: readonly string[] | null): Promise<SiteControlsRecord[]> {
    this.counters.queries += 1;
    return readControlsOf(this.pool, sites);
  }

  /** A listener's failure (a closed socket) must not stop the others from hearing of the change. */
  private safely(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'controls feed: a listener failed');
    }
  }
}
