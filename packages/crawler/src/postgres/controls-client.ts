/**
 * The controls client for a crawler that shares the service's PostgreSQL (no API in between): one
 * dedicated connection LISTENs on `th_controls`, which the `site_controls` trigger notifies with
 * `{site, version}` on every change, and re-reads the changed sites from the `crawler_controls` view
 * (contract.ts; the server's migration 010 makes it: the fields a crawler obeys, nothing else).
 *
 * - On (re)connecting it LISTENs first and then reads every (filtered) record as a snapshot: a change
 *   committed in between is both read and notified, and the version rule applies it once.
 * - A lost connection (a restart, the backend killed) keeps the map and reconnects with capped, jittered
 *   backoff; notifications sent meanwhile are lost, which the snapshot after the reconnect makes good.
 * - The connection is its own (not from a pool: a LISTEN must outlive any one query); with `pool`, it is
 *   made with that pool's settings and the pool itself is not used.
 * - Every row is checked (the package's controls schema) before it is obeyed; a row that fails is logged
 *   and left out, as a garbled record from the API's stream is.
 */
import type * as Pg from 'pg';
import * as z from '../zod';
import { retryDelayMs } from '../recorder/backoff';
import { defaultRecorderLogger, describeError, type RecorderLogger } from '../recorder/report';
import { tryNormaliseSite } from '../events/site';
import {
  ControlsClientError,
  ControlsState,
  type ControlsClient,
  type UnknownSitePolicy,
} from '../controls/controls-state';
import { parseSiteControls } from '../controls/record-schema';
import type { SiteControls } from '../controls/types';
import { CONTROLS_CHANNEL, CONTROLS_VIEW } from './contract';
import { loadPg } from './load-pg';

export interface PostgresControlsClientOptions {
  /** Connect with this pool's settings (the pool itself is not used), or with `connectionString`. */
  pool?: Pg.Pool;
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

/** A row of the view, as node-postgres returns it (bigint as text, timestamptz as Date). */
const rowSchema = z.object({
  site: z.string(),
  concurrency_limit: z.number(),
  revisit_multiplier: z.number(),
  paused: z.boolean(),
  canary_only: z.boolean(),
  effective_cost_multiplier: z.number(),
  band: z.string(),
  reason: z.string(),
  version: z.union([z.string(), z.number()]),
  updated_at: z.date(),
});

const COLUMNS =
  'site, concurrency_limit, revisit_multiplier, paused, canary_only, effective_cost_multiplier, band, reason, ' +
  'version, updated_at';

/** The view's rows for these sites (null: every site), checked; a row that fails the check is logged and left out. */
async function readControls(
  c: Pg.Client,
  sites: readonly string[] | null,
  log: () => RecorderLogger,
): Promise<SiteControls[]> {
  const { rows } =
    sites === null
      ? await c.query<Record<string, unknown>>(`SELECT ${COLUMNS} FROM ${CONTROLS_VIEW} ORDER BY site`)
      : await c.query<Record<string, unknown>>(
          `SELECT ${COLUMNS} FROM ${CONTROLS_VIEW} WHERE site = ANY($1::text[]) ORDER BY site`,
          [sites],
        );
  const out: SiteControls[] = [];
  for (const raw of rows) {
    const row = rowSchema.safeParse(raw);
    const record = row.success
      ? parseSiteControls({
          site: row.data.site,
          concurrencyLimit: row.data.concurrency_limit,
          revisitMultiplier: row.data.revisit_multiplier,
          paused: row.data.paused,
          canaryOnly: row.data.canary_only,
          effectiveCostMultiplier: row.data.effective_cost_multiplier,
          band: row.data.band,
          reason: row.data.reason,
          version: Number(row.data.version),
          updatedAt: row.data.updated_at.toISOString(),
        })
      : ({
          ok: false,
          error: row.error.issues.map((i) => `${i.path.join('.') || 'row'}: ${i.message}`).join('; '),
        } as const);
    if (record.ok) out.push(record.record);
    else
      log().warn(
        { site: typeof raw.site === 'string' ? raw.site.slice(0, 253) : undefined, error: record.error },
        `controls: ignored a ${CONTROLS_VIEW} row that is not a controls record (${record.error})`,
      );
  }
  return out;
}

/** PostgreSQL errors a reconnect will not cure: wrong password, no such database, the schema not migrated. */
function refusalOf(err: unknown): ControlsClientError | undefined {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  if (typeof code !== 'string') return undefined;
  if (code.startsWith('28'))
    return new ControlsClientError(
      `controls: PostgreSQL refused the login (${describeError(err)}); check the user and password of the ` +
        `connection string`,
      'database',
    );
  if (code === '3D000')
    return new ControlsClientError(
      `controls: ${describeError(err)}; check the database name of the connection string`,
      'database',
    );
  if (code === '42P01')
    return new ControlsClientError(
      `controls: the database has no ${CONTROLS_VIEW} view (${describeError(err)}); is it Target Health's ` +
        `database, migrated (target-health migrate) by version 0.1 or later?`,
      'database',
    );
  if (code === '42501')
    return new ControlsClientError(
      `controls: ${describeError(err)}; the role needs GRANT SELECT ON ${CONTROLS_VIEW} (docs/security.md, "A ` +
        `least-privilege role for crawlers")`,
      'database',
    );
  return undefined;
}

export function createPostgresControlsClient(options: PostgresControlsClientOptions): ControlsClient {
  if (
    typeof options !== 'object' ||
    options === null ||
    (options.pool === undefined) === (options.connectionString === undefined)
  ) {
    throw new Error(
      'createPostgresControlsClient: pass either pool (a pg.Pool) or connectionString ' +
        '(postgres://user:password@host:5432/database)',
    );
  }
  if (options.connectionString !== undefined && !/^postgres(ql)?:\/\//.test(options.connectionString)) {
    throw new Error(
      'createPostgresControlsClient: connectionString must be a PostgreSQL URL like ' +
        'postgres://user:password@host:5432/database',
    );
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
  const state = new ControlsState(
    options.unknownSite ?? 'allow',
    options.readyTimeoutMs ?? 10_000,
    log,
    'the PostgreSQL controls channel',
  );
  const pg = loadPg('createPostgresControlsClient');
  const clientConfig: Pg.ClientConfig = {
    ...(options.pool ? options.pool.options : { connectionString: options.connectionString }),
    application_name: 'target-health-controls-client',
    keepAlive: true,
  };

  let closed = false;
  let client: Pg.Client | undefined;
  let failures = 0;
  let reconnectTimer: NodeJS.Timeout | undefined;
  /** Sites notified and not yet read; read together (one query per burst of changes). */
  const pending = new Set<string>();
  let reading = false;

  async function readPending(c: Pg.Client): Promise<void> {
    if (reading || pending.size === 0) return;
    reading = true;
    const batch = [...pending];
    pending.clear();
    try {
      for (const record of await readControls(c, batch, log)) state.apply(record);
    } catch (err) {
      // The connection is failing: its 'error'/'end' reconnects, and the snapshot after it reads these sites too.
      log().warn(
        { err: describeError(err), sites: batch.length },
        'controls: could not read changed controls; they are read again after reconnecting',
      );
    } finally {
      reading = false;
    }
    if (pending.size > 0 && client === c) setImmediate(() => void readPending(c));
  }

  function lost(c: Pg.Client, err?: unknown): void {
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
    reconnectTimer = setTimeout(
      () => void connect(),
      refusal ? reconnectMaxMs : retryDelayMs(failures, { initialMs: 250, maxMs: reconnectMaxMs }),
    );
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
      const records = await readControls(c, wanted === null ? null : sites, log);
      if (client !== c || closed) return;
      failures = 0;
      state.connectedNow();
      state.applySnapshot(records);
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
