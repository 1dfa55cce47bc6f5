/**
 * The controls client for a crawler that shares the service's PostgreSQL (no API in between): one
 * dedicated connection LISTENs on `th_controls`, which the `site_controls` trigger notifies with
 * `{site, version}` on every change (db/migrations/006_api.sql), and re-reads the changed rows
 * (db/controls.ts readControlsOf) — the same mechanism as the API's own cache (api/controls-feed.ts).
 *
 * - On (re)connecting it LISTENs first and then reads every (filtered) record as a snapshot: a change
 *   committed in between is both read and notified, and the version rule applies it once.
 * - A lost connection (a restart, the backend killed) keeps the map and reconnects with capped, jittered
 *   backoff; notifications sent meanwhile are lost, which the snapshot after the reconnect makes good.
 * - The connection is its own (not from a pool: a LISTEN must outlive any one query); with `pool`, it is
 *   made with that pool's settings and the pool itself is not used.
 */
import pg from 'pg';
import { z } from 'zod';
import { controlsOf, readControlsOf, type SiteControlsRecord } from '../db/controls';
import { retryDelayMs } from '@target-health/crawler/recorder/backoff';
import { defaultRecorderLogger, describeError, type RecorderLogger } from '@target-health/crawler/recorder/report';
import { tryNormaliseSite } from '@target-health/crawler/events/site';
import { ControlsClientError, ControlsState, type ControlsClient, type UnknownSitePolicy } from '@target-health/crawler/controls/controls-state';
import type { SiteControls } from '@target-health/crawler/controls/types';

/** The channel the `site_controls` trigger notifies (db/migrations/006_api.sql; api/controls-feed.ts listens on it too). */
const CONTROLS_CHANNEL = 'th_controls';

export interface PostgresControlsClientOptions {
  /** Connect with this pool's settings (the pool itself is not used), or with `connectionString`. */
  pool?: pg.Pool;
  /** postgres://user:password@host:5432/database (e.g. process.env.DATABASE_URL). */
  connectionString?: string;
  /** Follow only these sites (any spelling); default: every site. */
  sites?: readonly string[];
  unknownSite?: UnknownSitePolicy;
  logger?: RecorderLogger;
  /** ready() rejects when no snapshot was read within this (10 s). */
  readyTimeoutMs?: number;
  /** Longest wait between reconnection attempts (10 s). */
  reconnectMaxMs?: number;
}

const notificationSchema = z.object({ site: z.string(), version: z.number().int() });

function toSiteControls(r: SiteControlsRecord): SiteControls {
  return { site: r.site, ...controlsOf(r), version: r.version, updatedAt: r.updatedAt.toISOString() };
}

/** PostgreSQL errors a reconnect will not cure: wrong password, no such database, the schema not migrated. */
function refusalOf(err: unknown): ControlsClientError | undefined {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  if (typeof code !== 'string') return undefined;
  if (code.startsWith('28')) return new ControlsClientError(`controls: PostgreSQL refused the login (${describeError(err)}); check the user and password of the connection string`, 'database');
  if (code === '3D000') return new ControlsClientError(`controls: ${describeError(err)}; check the database name of the connection string`, 'database');
  if (code === '42P01') return new ControlsClientError(`controls: the database has no site_controls table (${describeError(err)}); is it Target Health's database, migrated (target-health migrate)?`, 'database');
  return undefined;
}

export function createPostgresControlsClient(options: PostgresControlsClientOptions): ControlsClient {
  if (typeof options !== 'object' || options === null || (options.pool === undefined) === (options.connectionString === undefined)) {
    throw new Error('createPostgresControlsClient: pass either pool (a pg.Pool) or connectionString (postgres://user:password@host:5432/database)');
  }
  if (options.connectionString !== undefined && !/^postgres(ql)?:\/\//.test(options.connectionString)) {
    throw new Error('createPostgresControlsClient: connectionString must be a PostgreSQL URL like postgres://user:password@host:5432/database');
  }
  const sites = (options.sites ?? []).map((site, i) => {
    const r = tryNormaliseSite(site);
    if (!r.ok) throw new Error(`createPostgresControlsClient: sites[${i}]: ${r.error.message}`);
    return r.site;
  });
  const wanted = options.sites === undefined ? null : new Set(sites);
  const reconnectMaxMs = options.reconnectMaxMs ?? 10_000;
  let logger = options.logger;
  const log = (): RecorderLogger => (logger ??= defaultRecorderLogger());
  const state = new ControlsState(options.unknownSite ?? 'allow', options.readyTimeoutMs ?? 10_000, log, 'the PostgreSQL controls channel');
  const clientConfig: pg.ClientConfig = { ...(options.pool ? options.pool.options : { connectionString: options.connectionString }), application_name: 'target-health-controls-client', keepAlive: true };

  let closed = false;
  let client: pg.Client | undefined;
  let failures = 0;
  let reconnectTimer: NodeJS.Timeout | undefined;
  /** Sites notified and not yet read; read together (one query per burst of changes). */
  const pending = new Set<string>();
  let reading = false;

  async function readPending(c: pg.Client): Promise<void> {
    if (reading || pending.size === 0) return;
    reading = true;
    const batch = [...pending];
    pending.clear();
    try {
      for (const record of await readControlsOf(c, batch)) state.apply(toSiteControls(record));
    } catch (err) {
      // The connection is failing: its 'error'/'end' reconnects, and the snapshot after it reads these sites too.
      log().warn({ err: describeError(err), sites: batch.length }, 'controls: could not read changed controls; they are read again after reconnecting');
    } finally {
      reading = false;
    }
    if (pending.size > 0 && client === c) setImmediate(() => void readPending(c));
  }

  function lost(c: pg.Client, err?: unknown): void {
    if (client !== c) return;
    client = undefined;
    c.removeAllListeners('notification');
    // A late socket error on the dead connection must not crash the crawler.
    c.on('error', () => undefined);
    void c.end().catch(() => undefined);
    if (closed) return;
    const refusal = refusalOf(err);
    if (refusal) state.refused(refusal);
    else state.disconnected(err === undefined ? 'the connection ended' : describeError(err));
    failures += 1;
    reconnectTimer = setTimeout(() => void connect(), refusal ? reconnectMaxMs : retryDelayMs(failures, { initialMs: 250, maxMs: reconnectMaxMs }));
    reconnectTimer.unref();
  }

  async function connect(): Promise<void> {
    if (closed) return;
    const c = new pg.Client(clientConfig);
    client = c;
    c.on('error', (err) => lost(c, err));
    c.on('end', () => lost(c));
    c.on('notification', (msg) => {
      if (msg.channel !== CONTROLS_CHANNEL || msg.payload === undefined) return;
      let note: z.output<typeof notificationSchema>;
      try {
        note = notificationSchema.parse(JSON.parse(msg.payload));
      } catch {
        log().warn({ payload: msg.payload.slice(0, 200) }, 'controls: ignored a malformed th_controls notification');
        return;
      }
      if (wanted !== null && !wanted.has(note.site)) return;
      if ((state.controlsFor(note.site)?.version ?? 0) >= note.version) return;
      pending.add(note.site);
      setImmediate(() => void readPending(c));
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${CONTROLS_CHANNEL}`);
      const records = await readControlsOf(c, wanted === null ? null : sites);
      if (client !== c || closed) return;
      failures = 0;
      state.connectedNow();
      state.applySnapshot(records.map(toSiteControls));
    } catch (err) {
      lost(c, err);
    }
  }

  void connect();

  return {
    controlsFor: (site) => state.controlsFor(site),
    onChange: (listener) => state.onChange(listener),
    ready: () => state.ready(),
    status: () => state.status(),
    async close() {
      if (closed) return;
      closed = true;
      clearTimeout(reconnectTimer);
      state.close();
      const c = client;
      client = undefined;
      if (c) {
        c.on('error', () => undefined);
        await c.end().catch(() => undefined);
      }
    },
  };
}
