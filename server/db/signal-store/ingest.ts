/**
 * Ingestion: validate, classify, and store a batch of request outcomes — raw rows, minute/hour/day
 * rollups and page norms — in ONE transaction, so a batch is either wholly stored or not at all.
 * Repeated event ids are ignored (ON CONFLICT DO NOTHING) and only the rows actually inserted reach
 * the rollups, so re-sending a batch after a timeout is safe; events sent without an id get one
 * derived from their content (derived-id.ts), so re-sending a file is safe too.
 *
 * Self-healing: validation refuses what the database cannot store, but should the database still
 * refuse a batch for its data (an SQLSTATE of class 22, 23 or 54), the batch is split in halves, each
 * stored in its own transaction, down to the single events it refuses — those are reported like
 * invalid lines, and every other event is stored. Anything else (connection lost, timeout, disk full)
 * is not the data's fault: it fails the call, and the caller sends the batch again later.
 */
import type { PoolClient } from 'pg';
import { parseEvent, type RequestOutcomeEvent } from '@target-health/crawler/events/event';
import { fastParseEvent } from '@target-health/crawler/events/fast-parse';
import { EVENT_HORIZON, horizonProblem, type EventHorizon } from '../../../core/signals/horizon';
import { cutText, wellFormed } from '@target-health/crawler/events/well-formed';
import type { Pool } from '../pool';
import type { Classification, Classifier, MarkerCatalogue, Norms } from '@target-health/crawler/events/classify';
import { deploymentCatalogue } from '../../config/marker-catalogue';
import {
  ALL_ROUTES,
  BatchAggregator,
  OTHER_PAGE_TYPE,
  OTHER_ROUTES,
  ROLLUP_LEVELS,
  bucketStart,
  type ClassifiedEvent,
  type DayKeys,
  type NormDelta,
  type RollupDelta,
} from './aggregate';
import { CardinalityGuard, DEFAULT_CARDINALITY_CAPS, type CardinalityCaps } from './cardinality';
import { createContextCache, type ClassificationContextCache, type NormWindow } from './norms';
import { normWindow, normsAsOf, type DayNorm } from './norms-as-of';
import { boolArray, numberArray, textArray } from './array-literal';
import { copyRaw, isUniqueViolation, storedTitle } from './copy-raw';
import { CopyPayload } from './copy-payload';
import { derivedEventId } from './derived-id';
import { ensureRollupStage, histLiteral, upsertRollups } from './rollup-stage';
import { ensurePartitions } from './partitions';
import type { IngestResult, RejectedLine } from './types';

export interface ParsedBatch {
  events: RequestOutcomeEvent[];
  /** The line (1-based input number) of each event, for reports about it after parsing. */
  lines: number[];
  rejected: RejectedLine[];
}

export interface ParseBatchOptions {
  /** "Now" for the time horizon, epoch ms (default: the system clock). */
  now?: number;
  horizon?: EventHorizon;
}

/**
 * Validates raw inputs; `firstLine` numbers them (1-based) for error reports. `defaultIds[i]`, when
 * given, becomes the event id of an input that has none (the recorder's ids; the inputs stay as given);
 * an event left without an id gets one derived from its content. Events outside the time horizon
 * around `now` are rejected (core/signals/horizon.ts).
 */
export function parseBatch(
  inputs: readonly unknown[],
  firstLine = 1,
  defaultIds?: readonly string[],
  options: ParseBatchOptions = {},
): ParsedBatch {
  const now = options.now ?? Date.now();
  const horizon = options.horizon ?? EVENT_HORIZON;
  const oldest = now - horizon.maxAgeMs;
  const newest = now + horizon.maxAheadMs;
  const events: RequestOutcomeEvent[] = [];
  const lines: number[] = [];
  const rejected: RejectedLine[] = [];
  for (let i = 0; i < inputs.length; i++) {
    const raw = inputs[i];
    let event = fastParseEvent(raw);
    if (!event) {
      const slow = parseEvent(raw);
      if (!slow.ok) {
        rejected.push({ line: firstLine + i, errors: slow.errors });
        continue;
      }
      event = slow.event;
    }
    if (event.ts < oldest || event.ts > newest) {
      rejected.push({
        line: firstLine + i,
        errors: [horizonProblem(event.ts, now, horizon, (raw as { ts?: unknown }).ts)!],
      });
      continue;
    }
    // Both parsers return a new object: setting the id here never touches the caller's input.
    if (event.eventId === undefined) event.eventId = defaultIds?.[i] ?? derivedEventId(event);
    events.push(event);
    lines.push(firstLine + i);
  }
  return { events, lines, rejected };
}

export interface StoreResult {
  inserted: number;
  duplicates: number;
  /** Events the database refused for their data (after splitting the batch), by line. */
  rejected: RejectedLine[];
}

export interface Ingester {
  /** Validates, classifies and stores; invalid inputs are reported, valid ones stored. */
  ingest(inputs: readonly unknown[], firstLine?: number, defaultIds?: readonly string[]): Promise<IngestResult>;
  /**
   * Stores events that are already parsed (the CLI parses while the previous batch is written);
   * `lines[i]` numbers `events[i]` in reports (default i + 1).
   */
  store(events: readonly RequestOutcomeEvent[], lines?: readonly number[]): Promise<StoreResult>;
  contexts: ClassificationContextCache;
}

export interface IngesterOptions {
  /** The clock the time horizon is measured from (default Date.now). */
  clock?: () => number;
  horizon?: EventHorizon;
  /** Route keys and page types per site and day with their own rows (cardinality.ts). */
  caps?: CardinalityCaps;
  /**
   * The marker catalogue events are classified with, asked for each batch (default: the deployment's,
   * TARGET_HEALTH_MARKERS re-read when it changes, else the built-in one; server/config/marker-catalogue.ts).
   */
  catalogue?: () => MarkerCatalogue;
  /**
   * Days of minute rollups the deployment keeps (TARGET_HEALTH_MINUTE_DAYS, the retention's
   * `minuteDays`): minute rows are written only for the UTC days retention would keep at the time of
   * the batch — an event older than that (a back-fill, a crawler's late buffer) reaches the hour and day
   * rollups and the raw table, as if retention had already run. Undefined: every minute row is written
   * (a backtest's scratch database, tests).
   */
  minuteDays?: number;
}

const DAY_MS = 86_400_000;

/**
 * The first UTC day (epoch ms) whose minute rows `target-health retention --minute-days <minuteDays>`
 * keeps at `now`: it drops a day's partition once the day's end is `minuteDays` days old
 * (partitions.ts), so the day holding that cutoff instant is the oldest kept. Undefined without a
 * minute retention (every day keeps its minute rows).
 */
export function firstMinuteDay(minuteDays: number | undefined, now: number): number | undefined {
  return minuteDays === undefined ? undefined : bucketStart('day', now - minuteDays * DAY_MS);
}

/** A batch's transaction is tried this often when it loses a deadlock or serialization conflict. */
const MAX_ATTEMPTS = 5;
const RETRY_BASE_MS = 20;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Preparing a batch is synchronous work of ~10 µs an event; a batch of 5,000 would hold the event loop
 * for ~50 ms, and every statement of the other batches in flight (each transaction makes a dozen round
 * trips) would wait for it — holding its locks the while. Every 256 events the loop gets a turn.
 */
const YIELD_EVERY_MASK = 255;
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

const sqlState = (err: unknown): string | undefined => {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
};

/** deadlock_detected or serialization_failure: PostgreSQL rolled the transaction back; retry it. */
function isConflictToRetry(err: unknown): boolean {
  const code = sqlState(err);
  return code === '40P01' || code === '40001';
}

/**
 * The database refused the batch for what is in it: data exception (22…), integrity constraint other
 * than the unique violation the repeat path handles (23…), program limit such as an index row too
 * large (54…). Splitting the batch finds the events at fault.
 */
export function isDataError(err: unknown): boolean {
  const code = sqlState(err);
  if (code === undefined || code.length !== 5) return false;
  return code.startsWith('22') || (code.startsWith('23') && code !== '23505') || code.startsWith('54');
}

function refusal(err: unknown): string {
  const message = wellFormed(cutText(err instanceof Error ? err.message : String(err), 200, ''));
  return (
    `the database refused this event (${message}; SQLSTATE ${sqlState(err) ?? '?'}); the other events of its ` +
    `batch are stored`
  );
}

export function createIngester(pool: Pool, options: IngesterOptions = {}): Ingester {
  const contexts = createContextCache(pool, undefined, undefined, options.catalogue ?? deploymentCatalogue().current);
  const cardinality = new CardinalityGuard(options.caps ?? DEFAULT_CARDINALITY_CAPS);
  const clock = options.clock ?? Date.now;

  /**
   * Classifies the batch, encodes its COPY rows and aggregates it. An event of UTC day D is judged
   * against the norms of D−14 … D−1 (norms-as-of.ts): the stored ones, plus those of the batch's own
   * earlier days, which are not stored yet — so a batch spanning several days (a backfill) is classified
   * day by day, in ascending order, as if each day had been fed and stored before the next.
   */
  async function prepare(events: readonly RequestOutcomeEvent[], minuteFrom: number | undefined): Promise<Prepared> {
    const n = events.length;
    const dayOf = new Array<number>(n);
    const days = new Set<number>();
    const siteDays = new Map<string, Set<number>>();
    let lastSite = '';
    let lastDay = NaN;
    for (let i = 0; i < n; i++) {
      const e = events[i]!;
      // Both parsers produce whole milliseconds; a hand-built event must too (the row format needs it).
      if (!Number.isSafeInteger(e.ts))
        throw new TypeError(
          `event ${i}: ts must be whole epoch milliseconds (got ${e.ts}); parse events with parseEvent`,
        );
      const day = bucketStart('day', e.ts);
      dayOf[i] = day;
      if (day === lastDay && e.site === lastSite) continue;
      lastDay = day;
      lastSite = e.site;
      days.add(day);
      const ofSite = siteDays.get(e.site);
      if (ofSite) ofSite.add(day);
      else siteDays.set(e.site, new Set([day]));
    }
    const classifiers = new Map<string, Classifier>();
    const windows = new Map<string, Map<number, NormWindow>>();
    await Promise.all(
      [...siteDays].map(async ([site, ofSite]) => {
        const [classifier, ofDay] = await Promise.all([contexts.classifier(site), contexts.windows(site, [...ofSite])]);
        classifiers.set(site, classifier);
        windows.set(site, ofDay);
      }),
    );

    const classifications = new Array<Classification>(n);
    const payload = new CopyPayload(n);
    const aggregator = new BatchAggregator(minuteFrom === undefined ? {} : { minuteFrom });
    type Context = { classifier: Classifier; norms: Map<string, Norms> };
    /** The classifier and norms of (site, day): the window's, plus the batch's rows of earlier days. */
    const contextOf = (site: string, day: number): Context => {
      const window = windows.get(site)!.get(day)!;
      const pending = days.size > 1 ? aggregator.normRows(site) : undefined;
      return { classifier: classifiers.get(site)!, norms: pending ? withPending(window, pending, day) : window.norms };
    };
    const classifyOne = (i: number, ctx: Context): void => {
      const e = events[i]!;
      const c = ctx.classifier(e, e.pageType === undefined ? undefined : ctx.norms.get(e.pageType));
      classifications[i] = c;
      payload.add(e, c);
      aggregator.add(e, c);
    };
    if (days.size === 1) {
      // The common case (a live feed): one day, in input order.
      const day = dayOf[0]!;
      const bySite = new Map<string, Context>();
      let site = '';
      let ctx: Context | undefined;
      for (let i = 0; i < n; i++) {
        const e = events[i]!;
        if (e.site !== site || ctx === undefined) {
          site = e.site;
          ctx = bySite.get(site);
          if (ctx === undefined) bySite.set(site, (ctx = contextOf(site, day)));
        }
        classifyOne(i, ctx);
        if ((i & YIELD_EVERY_MASK) === YIELD_EVERY_MASK) await yieldToLoop();
      }
    } else {
      const byDay = new Map<number, number[]>();
      for (let i = 0; i < n; i++) {
        const list = byDay.get(dayOf[i]!);
        if (list) list.push(i);
        else byDay.set(dayOf[i]!, [i]);
      }
      // Ascending days, each in input order: a day's norms are made once its earlier days are aggregated.
      let done = 0;
      for (const day of [...byDay.keys()].sort((a, b) => a - b)) {
        const bySite = new Map<string, Context>();
        for (const i of byDay.get(day)!) {
          const site = events[i]!.site;
          let ctx = bySite.get(site);
          if (ctx === undefined) bySite.set(site, (ctx = contextOf(site, day)));
          classifyOne(i, ctx);
          if ((++done & YIELD_EVERY_MASK) === 0) await yieldToLoop();
        }
      }
    }
    return { classifications, payload, aggregator, days };
  }

  /** One batch in one transaction (retried whole when it loses a deadlock); throws what the database says. */
  async function storeWhole(events: readonly RequestOutcomeEvent[]): Promise<{ inserted: number; duplicates: number }> {
    if (events.length === 0) return { inserted: 0, duplicates: 0 };
    // Minute rows are written only for the days retention keeps them (judged once, for the whole batch).
    const minuteFrom = firstMinuteDay(options.minuteDays, clock());
    const { classifications, payload, aggregator, days } = await prepare(events, minuteFrom);
    await ensureBatchPartitions(
      pool,
      days,
      minuteFrom === undefined ? [...days] : [...days].filter((day) => day >= minuteFrom),
    );
    for (let attempt = 1; ; attempt++) {
      const client = await pool.connect();
      // A connection that failed below the SQL level (lost, or timed out on our side) is not reused.
      let broken: Error | undefined;
      try {
        await ensureRollupStage(client);
        await client.query('BEGIN');
        let inserted = events.length;
        let stored = aggregator;
        if (!(await copyUnlessRepeated(client, payload.bytes()))) {
          // The batch repeats stored event ids: insert what is new, and aggregate only that.
          const fresh = await insertRawSkippingRepeats(
            client,
            events.map((event, i) => ({ event, classification: classifications[i]! })),
          );
          stored = new BatchAggregator(minuteFrom === undefined ? {} : { minuteFrom });
          for (const { event, classification } of fresh) stored.add(event, classification);
          inserted = fresh.length;
        }
        // Decided on what the batch adds before any rollup or norm row is written (cardinality.ts). After
        // the raw rows, which do not depend on it: the admission's lock on a new (site, day) is held to
        // COMMIT, and concurrent batches of that day wait for it — the raw COPY, half of a batch's time,
        // no longer happens while they wait.
        const admission = await cardinality.admit(client, stored.routeKeysByDay(), stored.pageTypesByDay());
        const deltas = stored.rollups(admission.keepRoute);
        const norms = stored.normDeltas(admission.keepPageType);
        for (const level of ROLLUP_LEVELS) await upsertRollups(client, level, deltas[level]);
        await upsertNorms(client, norms);
        await client.query('COMMIT');
        // Later days' windows hold these rows now: this ingester reads them again.
        for (const d of norms) contexts.stored(d.site, d.day);
        admission.committed({ routes: writtenRouteKeys(deltas.day), pageTypes: writtenPageTypes(norms) });
        return { inserted, duplicates: events.length - inserted };
      } catch (err) {
        if (sqlState(err) === undefined) broken = err instanceof Error ? err : new Error(String(err));
        else await client.query('ROLLBACK').catch(() => undefined);
        // Two batches in flight that repeat each other's ids in a different order can deadlock on the
        // unique index; the transaction was rolled back whole, so running it again is safe.
        if (attempt < MAX_ATTEMPTS && isConflictToRetry(err)) {
          await sleep(RETRY_BASE_MS * attempt * (1 + Math.random()));
          continue;
        }
        throw err;
      } finally {
        client.release(broken);
      }
    }
  }

  /** Stores the batch; when the database refuses it for its data, the halves separately, recursively. */
  async function store(events: readonly RequestOutcomeEvent[], lines?: readonly number[]): Promise<StoreResult> {
    try {
      return { ...(await storeWhole(events)), rejected: [] };
    } catch (err) {
      if (!isDataError(err)) throw err;
      const lineOf = (i: number) => lines?.[i] ?? i + 1;
      if (events.length === 1)
        return { inserted: 0, duplicates: 0, rejected: [{ line: lineOf(0), errors: [refusal(err)] }] };
      const mid = Math.ceil(events.length / 2);
      const numbers = Array.from({ length: events.length }, (_, i) => lineOf(i));
      const first = await store(events.slice(0, mid), numbers.slice(0, mid));
      const second = await store(events.slice(mid), numbers.slice(mid));
      return {
        inserted: first.inserted + second.inserted,
        duplicates: first.duplicates + second.duplicates,
        rejected: [...first.rejected, ...second.rejected],
      };
    }
  }

  return {
    contexts,
    store,
    async ingest(inputs, firstLine = 1, defaultIds) {
      const parsed = parseBatch(inputs, firstLine, defaultIds, {
        now: clock(),
        ...(options.horizon ? { horizon: options.horizon } : {}),
      });
      const stored = await store(parsed.events, parsed.lines);
      const rejected =
        stored.rejected.length === 0
          ? parsed.rejected
          : [...parsed.rejected, ...stored.rejected].sort((a, b) => a.line - b.line);
      return {
        accepted: stored.inserted + stored.duplicates,
        inserted: stored.inserted,
        duplicates: stored.duplicates,
        rejected,
      };
    },
  };
}

interface Prepared {
  classifications: Classification[];
  payload: CopyPayload;
  aggregator: BatchAggregator;
  days: Set<number>;
}

/**
 * The norms of `day` from the stored window plus the batch's own rows of earlier days in it (not stored
 * yet). Without such rows, the window's norms as they are. A resent batch counts its already stored
 * events twice here (stored and pending): the same pages twice leave a day's median and rate as they are.
 */
function withPending(
  window: NormWindow,
  pending: ReadonlyMap<string, ReadonlyMap<number, DayNorm>>,
  day: number,
): Map<string, Norms> {
  const { from, to } = normWindow(day);
  let rows: Map<string, DayNorm[]> | undefined;
  for (const [pageType, byDay] of pending) {
    for (const [d, row] of byDay) {
      if (d < from || d >= to) continue;
      rows ??= new Map([...window.rows].map(([t, list]) => [t, [...list]]));
      let list = rows.get(pageType);
      if (!list) rows.set(pageType, (list = []));
      list.push(row);
    }
  }
  return rows ? normsAsOf(rows, day) : window.norms;
}

/** The route keys with their own day rows in a batch's deltas (what it wrote), per site and day. */
function writtenRouteKeys(deltas: readonly RollupDelta[]): Map<string, DayKeys> {
  const out = new Map<string, DayKeys>();
  for (const d of deltas) {
    if (d.routeKey === ALL_ROUTES || d.routeKey === OTHER_ROUTES) continue;
    addKey(out, d.site, d.bucket, d.routeKey);
  }
  return out;
}

function writtenPageTypes(deltas: readonly NormDelta[]): Map<string, DayKeys> {
  const out = new Map<string, DayKeys>();
  for (const d of deltas) if (d.pageType !== OTHER_PAGE_TYPE) addKey(out, d.site, d.day, d.pageType);
  return out;
}

function addKey(into: Map<string, DayKeys>, site: string, day: number, key: string): void {
  const entryId = `${site}\u0000${day}`;
  let entry = into.get(entryId);
  if (!entry) into.set(entryId, (entry = { site, day, keys: new Set<string>() }));
  entry.keys.add(key);
}

async function ensureBatchPartitions(
  pool: Pool,
  days: ReadonlySet<number>,
  minuteDays: readonly number[],
): Promise<void> {
  // One instant per distinct day is enough for every table's granularity (day, month, year).
  await ensurePartitions(pool, 'request_events', days);
  // No empty minute partitions for days whose minute rows retention would drop.
  await ensurePartitions(pool, 'rollup_minute', minuteDays);
  await ensurePartitions(pool, 'rollup_hour', days);
  await ensurePartitions(pool, 'rollup_day', days);
  await ensurePartitions(pool, 'page_norms_day', days);
}

/**
 * COPYs the raw rows; false (and nothing written) when the batch repeats an event id that is already
 * stored: COPY cannot skip conflicting rows, so the caller takes the conflict-aware path.
 */
async function copyUnlessRepeated(client: PoolClient, payload: Buffer): Promise<boolean> {
  await client.query('SAVEPOINT raw_copy');
  try {
    await copyRaw(client, payload);
    return true;
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    await client.query('ROLLBACK TO SAVEPOINT raw_copy');
    return false;
  }
}

/**
 * The conflict-aware path, for a batch that repeats stored event ids: INSERT ... ON CONFLICT DO
 * NOTHING, returning the keys actually inserted so that only those events reach the rollups.
 */
async function insertRawSkippingRepeats(
  client: PoolClient,
  batch: readonly ClassifiedEvent[],
): Promise<ClassifiedEvent[]> {
  const n = batch.length;
  const cols = {
    ord: new Array<number>(n),
    ts: new Array<number>(n),
    site: new Array<string>(n),
    eventId: new Array<string | null>(n),
    country: new Array<string | null>(n),
    pool: new Array<string | null>(n),
    session: new Array<string | null>(n),
    pageType: new Array<string | null>(n),
    status: new Array<number | null>(n),
    networkError: new Array<string | null>(n),
    latency: new Array<number>(n),
    bytes: new Array<number | null>(n),
    retries: new Array<number | null>(n),
    credits: new Array<number | null>(n),
    extraction: new Array<string | null>(n),
    missing: new Array<string | null>(n),
    validRecords: new Array<number | null>(n),
    canary: new Array<boolean>(n),
    outcome: new Array<string>(n),
    rule: new Array<string>(n),
    marker: new Array<string | null>(n),
    title: new Array<string | null>(n),
  };
  for (let i = 0; i < n; i++) {
    const { event: e, classification: c } = batch[i]!;
    cols.ord[i] = i;
    cols.ts[i] = e.ts;
    cols.site[i] = e.site;
    cols.eventId[i] = e.eventId ?? null;
    cols.country[i] = e.route.country ?? null;
    cols.pool[i] = e.route.pool ?? null;
    cols.session[i] = e.route.session ?? null;
    cols.pageType[i] = e.pageType ?? null;
    cols.status[i] = e.status ?? null;
    cols.networkError[i] = e.networkError ?? null;
    cols.latency[i] = e.latencyMs;
    cols.bytes[i] = e.bytes ?? null;
    cols.retries[i] = e.retries ?? null;
    cols.credits[i] = e.credits ?? null;
    cols.extraction[i] = e.extraction?.result ?? null;
    // text[] per row cannot travel inside a text[][] of ragged rows: send each row's array literal as
    // text and cast it in SQL (not JSON: jsonb refuses some strings text[] takes).
    cols.missing[i] =
      e.extraction?.missingFields && e.extraction.missingFields.length > 0
        ? textArray(e.extraction.missingFields)
        : null;
    cols.validRecords[i] = e.extraction?.validRecords ?? null;
    cols.canary[i] = e.canary ?? false;
    cols.outcome[i] = c.outcome;
    cols.rule[i] = c.rule;
    cols.marker[i] = c.evidence?.markerId ?? null;
    cols.title[i] = storedTitle(e, c) ?? null;
  }
  const sql = `INSERT INTO request_events (ts, site, event_id, country, pool, session, page_type, status, network_error,
      latency_ms, bytes, retries, credits, extraction, missing_fields, valid_records, canary, outcome, rule, marker_id,
      title)
    SELECT to_timestamp(ts / 1000.0), site, event_id, country, pool, session, page_type, status, network_error,
      latency_ms, bytes, retries, credits,
      extraction, missing::text[],
      valid_records, canary, outcome, rule, marker_id, title
    FROM unnest($1::int[], $2::float8[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
      $9::smallint[], $10::text[], $11::float8[], $12::bigint[], $13::int[], $14::float8[], $15::text[], $16::text[],
      $17::int[], $18::bool[], $19::text[], $20::text[], $21::text[], $22::text[])
      AS t(ord, ts, site, event_id, country, pool, session, page_type, status, network_error, latency_ms, bytes,
           retries, credits, extraction, missing, valid_records, canary, outcome, rule, marker_id, title)
    ON CONFLICT DO NOTHING`;
  // Hand-built literals: see array-literal.ts for why.
  const params = [
    numberArray(cols.ord),
    numberArray(cols.ts),
    textArray(cols.site),
    textArray(cols.eventId),
    textArray(cols.country),
    textArray(cols.pool),
    textArray(cols.session),
    textArray(cols.pageType),
    numberArray(cols.status),
    textArray(cols.networkError),
    numberArray(cols.latency),
    numberArray(cols.bytes),
    numberArray(cols.retries),
    numberArray(cols.credits),
    textArray(cols.extraction),
    textArray(cols.missing),
    numberArray(cols.validRecords),
    boolArray(cols.canary),
    textArray(cols.outcome),
    textArray(cols.rule),
    textArray(cols.marker),
    textArray(cols.title),
  ];
  const { rows } = await client.query<{ site: string; event_id: string | null; ts: Date }>(
    `${sql} RETURNING site, event_id, ts`,
    params,
  );
  const insertedKeys = new Set(
    rows.filter((r) => r.event_id !== null).map((r) => `${r.site}\u0000${r.event_id}\u0000${r.ts.getTime()}`),
  );
  return batch.filter((b) => {
    if (b.event.eventId === undefined) return true;
    const key = `${b.event.site}\u0000${b.event.eventId}\u0000${b.event.ts}`;
    // Delete as we go: of two events with one id in the same batch, only the first was inserted.
    return insertedKeys.delete(key);
  });
}

async function upsertNorms(client: PoolClient, deltas: readonly NormDelta[]): Promise<void> {
  if (deltas.length === 0) return;
  await client.query(
    `INSERT INTO page_norms_day AS n (site, page_type, day, responses, with_records, extractions, bytes_hist)
     SELECT site, page_type, day, responses, with_records, extractions, bytes_hist::int[]
     FROM unnest($1::text[], $2::text[], $3::date[], $4::bigint[], $5::bigint[], $6::bigint[], $7::text[])
       AS t(site, page_type, day, responses, with_records, extractions, bytes_hist)
     ON CONFLICT (site, page_type, day) DO UPDATE SET
       responses = n.responses + EXCLUDED.responses,
       with_records = n.with_records + EXCLUDED.with_records,
       extractions = n.extractions + EXCLUDED.extractions,
       bytes_hist = th_hist_add(n.bytes_hist, EXCLUDED.bytes_hist)`,
    [
      textArray(deltas.map((d) => d.site)),
      textArray(deltas.map((d) => d.pageType)),
      textArray(deltas.map((d) => new Date(d.day).toISOString().slice(0, 10))),
      numberArray(deltas.map((d) => d.responses)),
      numberArray(deltas.map((d) => d.withRecords)),
      numberArray(deltas.map((d) => d.extractions)),
      textArray(deltas.map((d) => histLiteral(d.bytesHist))),
    ],
  );
}
