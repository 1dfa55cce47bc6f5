/**
 * Stored events back in the event schema (docs/events.md), for `target-health export`: what a crawler
 * sent, as `ingest` takes it. The raw table keeps no headers, body sample or title (the classifier read
 * them at ingest), so an exported event carries the verdict instead: `outcome`, and the rule and marker
 * that decided it in `outcomeReason` — re-ingested, it is classified as it was.
 */
import type { Pool } from '../pool';

/** A stored row as the export reads it. */
interface RawRow {
  ts: Date;
  site: string;
  event_id: string | null;
  country: string | null;
  pool: string | null;
  session: string | null;
  page_type: string | null;
  status: number | null;
  network_error: string | null;
  latency_ms: number;
  bytes: string | null;
  retries: number | null;
  credits: number | null;
  extraction: string | null;
  missing_fields: string[] | null;
  valid_records: number | null;
  canary: boolean;
  outcome: string;
  rule: string;
  marker_id: string | null;
}

/** An exported event: the event schema's fields, JSON-ready. */
export type ExportedEvent = Record<string, unknown>;

/** Rows per read: a keyset page of the raw table (a day of a busy site is millions of rows). */
const PAGE_ROWS = 5_000;

/** outcomeReason's limit in the event schema. */
const MAX_REASON = 200;

export function exportedEvent(row: RawRow, shiftMs: number): ExportedEvent {
  const event: ExportedEvent = { ts: new Date(row.ts.getTime() + shiftMs).toISOString(), site: row.site };
  if (row.event_id !== null) event.eventId = row.event_id;
  const route: Record<string, string> = {};
  if (row.country !== null) route.country = row.country;
  if (row.pool !== null) route.pool = row.pool;
  if (row.session !== null) route.session = row.session;
  if (Object.keys(route).length > 0) event.route = route;
  if (row.page_type !== null) event.pageType = row.page_type;
  if (row.status !== null) event.status = row.status;
  if (row.network_error !== null) event.networkError = row.network_error;
  event.latencyMs = row.latency_ms;
  if (row.bytes !== null) event.bytes = Number(row.bytes);
  if (row.retries !== null) event.retries = row.retries;
  if (row.credits !== null) event.credits = row.credits;
  if (row.extraction !== null) {
    const extraction: Record<string, unknown> = { result: row.extraction };
    if (row.valid_records !== null) extraction.validRecords = row.valid_records;
    if (row.missing_fields !== null && row.missing_fields.length > 0) extraction.missingFields = row.missing_fields;
    event.extraction = extraction;
  }
  if (row.canary) event.canary = true;
  event.outcome = row.outcome;
  event.outcomeReason = `exported: ${row.rule}${row.marker_id === null ? '' : ` (${row.marker_id})`}`.slice(
    0,
    MAX_REASON,
  );
  return event;
}

/**
 * The site's stored events with `from <= ts < to`, oldest first, a page at a time, each moved by
 * `shiftMs`. Reads through the raw table's (ts, site, event_id) index, one keyset page per query.
 */
export async function* exportEvents(
  pool: Pool,
  site: string,
  from: Date,
  to: Date,
  shiftMs = 0,
): AsyncGenerator<ExportedEvent[]> {
  let after: { ts: Date; eventId: string | null } | undefined;
  for (;;) {
    const { rows } = await pool.query<RawRow>(
      `SELECT ts, site, event_id, country, pool, session, page_type, status, network_error, latency_ms, bytes, retries,
              credits, extraction, missing_fields, valid_records, canary, outcome, rule, marker_id
         FROM request_events
        WHERE site = $1 AND ts >= $2 AND ts < $3
          ${after === undefined ? '' : 'AND (ts, event_id) > ($4, $5)'}
        ORDER BY ts, event_id
        LIMIT ${PAGE_ROWS}`,
      after === undefined ? [site, from, to] : [site, from, to, after.ts, after.eventId],
    );
    if (rows.length === 0) return;
    yield rows.map((row) => exportedEvent(row, shiftMs));
    if (rows.length < PAGE_ROWS) return;
    const last = rows[rows.length - 1]!;
    after = { ts: last.ts, eventId: last.event_id };
  }
}
