/**
 * The "realistic" ingest mix of the benchmarks: what a fleet's back-fill looks like, as `simulate`
 * writes it, rather than the bare counters of {@link generateEvents}:
 * - a tenth of the events carry a 1–4 KB body sample, with the response headers and (ordinary pages)
 *   the title a crawler sends along: refusal and error pages (Cloudflare, Akamai, DataDome, PerimeterX,
 *   nginx, reCAPTCHA walls, "unusual traffic", app shells, 404s, 5xx) and ordinary pages whose head
 *   carries the vendors' scripts — the classifier reads every one of them;
 * - the history spread over 15 days (every batch of a back-fill meets its own day's norm window);
 * - many sites (40 by default), interleaved as a fleet's traffic is.
 * Deterministic (seeded). Pages are rendered once per site into a small pool before the events are
 * made, so making an event stays cheap inside the timed recorder run.
 */
import { normalPageHead, renderPage, type PageContext, type Protection } from '../../core/scenarios/pages';
import type { PageType } from '../../core/scenarios/fleet';
import { Rng } from '../../core/scenarios/rng';
import { generateEvents, lcg } from './event-generator';

export interface RealisticOptions {
  /** Site names are `<i>.<sitesDomain>`. */
  sitesDomain: string;
  sites?: number;
  from: number;
  to: number;
  count: number;
  seed?: number;
  ids?: boolean;
  /** ISO-8601 `ts` strings (what `simulate` writes) instead of epoch milliseconds. */
  isoTs?: boolean;
}

export const REALISTIC_DEFAULTS = { sites: 6, bodyShare: 0.1, minBodyChars: 1_024, maxBodyChars: 4_096 } as const;

/** Refusal and error pages carrying a body, with the share of the refused events each takes. */
const REFUSAL_PAGES = [
  'cloudflare-block',
  'cloudflare-challenge',
  'akamai-denied',
  'rate-limited',
  'perimeterx-captcha',
  'datadome-captcha',
  'security-check-200',
  'unusual-traffic',
  'perimeterx-denied-200',
  'small-page',
  'not-found',
  'server-error',
] as const;
/** Of the events with a body, this share are refusal or error pages; the rest ordinary pages. */
const REFUSAL_SHARE = 0.4;
const PAGES_PER_SITE = 24;
const PROTECTIONS: readonly Protection[] = ['cloudflare', 'akamai', 'datadome', 'perimeterx', 'none'];

interface Page {
  status: number;
  bytes: number;
  headers: Record<string, string>;
  bodySample: string;
  title?: string;
  /** A 2xx refusal: the crawler's extraction found nothing. */
  empty: boolean;
}

/** Product tiles after a page's head, until the sample holds `chars` characters (then cut there). */
export function withTiles(rng: Rng, head: string, chars: number): string {
  let body = head;
  for (let tile = 0; body.length < chars; tile++) {
    body +=
      `<article class="tile" data-sku="${rng.hex(8)}"><a href="/p/item-${rng.int(1, 99_999)}"><img ` +
      `src="/img/${rng.hex(12)}.webp" alt="Item ${tile}" loading="lazy" width="320" height="320">` +
      (`<h3 class="tile-title">Item ${tile}</h3></a><span ` +
        `class="price">€${rng.int(9, 499)}.${rng.int(10, 99)}</span><button class="add" ` +
        `data-id="${rng.int(1, 1e6)}">Add to cart</button></article>`);
  }
  return body.slice(0, chars);
}

/** A refusal page grown to about `chars` with the inline style real vendor pages carry in their head. */
function padded(body: string, chars: number): string {
  if (body.length >= chars) return body;
  const rules: string[] = [];
  for (let i = 0, len = 0; len < chars - body.length - 16; i++) {
    const rule =
      `.c${i}{margin:0 auto;padding:${i % 9}px;font:400 ${12 + (i % 6)}px/1.5 ` +
      `system-ui,sans-serif;color:#${((i * 2654435761) >>> 8).toString(16).padStart(6, '0').slice(0, 6)}}`;
    rules.push(rule);
    len += rule.length;
  }
  const style = `<style>${rules.join('')}</style>`;
  const at = body.search(/<\/head>/i);
  return at < 0 ? style + body : body.slice(0, at) + style + body.slice(at);
}

function sitePages(rng: Rng, host: string): Page[] {
  const protection = rng.pick(PROTECTIONS);
  const pages: Page[] = [];
  for (let i = 0; i < PAGES_PER_SITE; i++) {
    const pageType = rng.pick(['product', 'listing', 'search'] as const satisfies readonly PageType[]);
    const c: PageContext = {
      host,
      pageType,
      path: `/p/item-${rng.int(1, 99_999)}`,
      country: 'DE',
      ts: Date.UTC(2026, 0, 1) + i * 60_000,
    };
    const chars = rng.int(REALISTIC_DEFAULTS.minBodyChars, REALISTIC_DEFAULTS.maxBodyChars);
    if (i < PAGES_PER_SITE * REFUSAL_SHARE) {
      const r = renderPage(REFUSAL_PAGES[i % REFUSAL_PAGES.length]!, rng, c);
      const bodySample = padded(r.bodySample ?? '', chars);
      const status = r.status ?? 503;
      pages.push({
        status,
        bytes: Math.max(r.bytes ?? 0, bodySample.length),
        headers: r.headers ?? {},
        bodySample,
        empty: status < 300,
      });
    } else {
      const head = normalPageHead(rng, protection, c);
      pages.push({
        status: 200,
        bytes: rng.int(40_000, 160_000),
        headers: head.headers,
        bodySample: withTiles(rng, head.bodySample, chars),
        title: head.title,
        empty: false,
      });
    }
  }
  return pages;
}

/**
 * The realistic mix: {@link generateEvents}' traffic (routes, latencies, extraction results, a few
 * body-less 403/429/503) spread over the sites, every tenth event (on average) given a page.
 */
export function* generateRealisticEvents(o: RealisticOptions): Generator<Record<string, unknown>> {
  const sites = o.sites ?? REALISTIC_DEFAULTS.sites;
  const seed = o.seed ?? 1;
  const rng = new Rng(seed);
  const hosts = realisticSites(o.sitesDomain, sites);
  const pages = hosts.map((h) => sitePages(rng, h));
  const rand = lcg(seed ^ 0x5bd1e995);
  let i = 0;
  for (const e of generateEvents({ site: hosts[0]!, from: o.from, to: o.to, count: o.count, seed })) {
    const s = Math.floor(rand() * sites);
    e.site = hosts[s]!;
    if (o.ids) e.eventId = `${hosts[s]!}-${seed}-${i}`;
    i++;
    if (rand() < REALISTIC_DEFAULTS.bodyShare) {
      const p = pages[s]![Math.floor(rand() * PAGES_PER_SITE)]!;
      e.status = p.status;
      e.bytes = p.bytes;
      e.headers = p.headers;
      e.bodySample = p.bodySample;
      if (p.title !== undefined) e.title = p.title;
      if (p.status >= 300) delete e.extraction;
      else if (p.empty) e.extraction = { result: 'empty', validRecords: 0 };
      else if ((e.extraction as { result: string }).result !== 'ok')
        e.extraction = { result: 'ok', validRecords: 1 + Math.floor(rand() * 20) };
    }
    if (o.isoTs) e.ts = new Date(e.ts as number).toISOString();
    yield e;
  }
}

/** Every site name of a realistic run (for checking what was stored). */
export function realisticSites(sitesDomain: string, sites: number = REALISTIC_DEFAULTS.sites): string[] {
  return Array.from({ length: sites }, (_, i) => `s${i}.${sitesDomain}`);
}
