/**
 * A site's normal, written into the signal store before a live crawl: the loop judges the present
 * against the site's own past (docs/scoring.md), and a new site is `learning` until it has one. The demo
 * and the end-to-end test back-fill it from the site's *real* normal answers — pages fetched from the
 * running site before it turns hostile (sizes, titles, latencies) — spread over the past days, through
 * the routes the crawler will use. So the baseline says what this site really serves, not a made-up one.
 */
import { ingestEvents } from '../../server/db/signal-store';
import type { Pool } from '../../server/db/pool';
import { Rng, hashText } from '../../core/scenarios/rng';

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
const BATCH = 5_000;

/** One normal answer of the site, as the crawler would record it. */
export interface NormalAnswer {
  pageType: string;
  status: number;
  bytes: number;
  latencyMs: number;
  title?: string;
  /** Set for pages that carry records (a product page): the extraction the crawler would report. */
  validRecords?: number;
}

export interface HistoryRoute {
  pool: string;
  country?: string;
}

export interface HistoryOptions {
  site: string;
  /** The routes the crawler will use; history traffic is spread evenly over them. */
  routes: readonly HistoryRoute[];
  /** Normal answers to draw from (at least one). */
  answers: readonly NormalAnswer[];
  /** Days of history ending a day before `now` (the loop leaves the last day out of the baseline). */
  days: number;
  /** Requests per history day. */
  perDay: number;
  now: number;
}

/** Writes the history; returns how many events were stored. Deterministic for the same options. */
export async function backfillHistory(pool: Pool, options: HistoryOptions): Promise<number> {
  const { site, routes, answers, days, perDay, now } = options;
  if (answers.length === 0) throw new Error(`history of ${site}: no normal answers to draw from`);
  if (routes.length === 0) throw new Error(`history of ${site}: no routes`);
  const rng = new Rng(hashText(site));
  // From `days + 1` days ago to one day ago, on whole minutes (the store rolls up by minute).
  const start = Math.floor((now - (days + 1) * DAY_MS) / MINUTE_MS) * MINUTE_MS;
  const total = days * perDay;
  const span = days * DAY_MS;
  let stored = 0;
  let batch: Record<string, unknown>[] = [];
  for (let i = 0; i < total; i++) {
    const answer = answers[rng.int(0, answers.length - 1)]!;
    const route = routes[i % routes.length]!;
    // ±20 % around the sampled size and latency: a normal day is not one number.
    const jitter = () => 0.8 + 0.4 * rng.next();
    batch.push({
      eventId: `history-${site}-${i}`,
      ts: start + Math.floor(((i + 0.5) / total) * span),
      site,
      route: { pool: route.pool, ...(route.country !== undefined ? { country: route.country } : {}) },
      pageType: answer.pageType,
      status: answer.status,
      latencyMs: Math.max(1, Math.round(answer.latencyMs * jitter())),
      bytes: Math.max(0, Math.round(answer.bytes * jitter())),
      ...(answer.title !== undefined ? { title: answer.title } : {}),
      ...(answer.validRecords !== undefined ? { extraction: { result: 'ok', validRecords: answer.validRecords } } : {}),
    });
    if (batch.length === BATCH) {
      stored += await write(pool, site, batch);
      batch = [];
    }
  }
  if (batch.length > 0) stored += await write(pool, site, batch);
  return stored;
}

async function write(pool: Pool, site: string, events: Record<string, unknown>[]): Promise<number> {
  const result = await ingestEvents(pool, events);
  // The history is made here from valid answers: a refusal is a bug in this module, not a user mistake.
  if (result.rejected.length > 0)
    throw new Error(
      `history of ${site}: ${result.rejected.length} events refused, first: ${JSON.stringify(result.rejected[0])}`,
    );
  return result.inserted + result.duplicates;
}

/**
 * Normal answers of a host, fetched from the running site through a proxy (as the crawler will reach
 * it) before it turns hostile: the history is then made of what the site really serves.
 */
export async function sampleNormalAnswers(
  urlOf: (path: string) => string,
  proxyUrl: string,
  pages: readonly string[],
): Promise<NormalAnswer[]> {
  const { fetch, ProxyAgent } = await import('undici');
  const dispatcher = new ProxyAgent(proxyUrl);
  try {
    const answers: NormalAnswer[] = [];
    for (const path of pages) {
      const started = performance.now();
      const response = await fetch(urlOf(path), { dispatcher });
      const body = await response.text();
      const latencyMs = Math.round(performance.now() - started);
      if (response.status !== 200)
        throw new Error(`history sample ${urlOf(path)}: the site answered ${response.status}, not a normal page`);
      const title = /<title>([^<]*)<\/title>/i.exec(body)?.[1]?.trim();
      answers.push({
        pageType: 'product',
        status: 200,
        bytes: Buffer.byteLength(body),
        latencyMs,
        ...(title ? { title } : {}),
        validRecords: 1,
      });
    }
    return answers;
  } finally {
    await dispatcher.close();
  }
}
