/**
 * Reads what an answer looked like from a Crawlee crawling context, whichever crawler made it: Http and
 * Cheerio crawlers hand over a Node `IncomingMessage` and the decoded body (a Buffer or a string),
 * Playwright a `Response` with methods and the page.
 */
import { BODY_SAMPLE_CHARS } from '../events/event';
import { bodySampleOf } from '../events/text';
import { BUILT_IN_MARKERS } from '../events/markers';

/** Headers the built-in markers read (packages/crawler/src/events/markers.ts): only these are sent with an event. */
export const CLASSIFIER_HEADERS: readonly string[] = [
  ...new Set(BUILT_IN_MARKERS.flatMap((m) => (m.headers ?? []).map((h) => h.name.toLowerCase()))),
];

/** A Node IncomingMessage (Http/Cheerio crawlers). */
interface NodeResponse {
  statusCode?: number;
  headers?: Record<string, string | string[] | undefined>;
}

/** A Playwright (or Puppeteer) Response. */
interface BrowserResponse {
  status(): number;
  headers(): Record<string, string>;
  allHeaders?(): Promise<Record<string, string>>;
  body?(): Promise<Buffer>;
}

export interface PageLike {
  content(): Promise<string>;
  title(): Promise<string>;
}

export interface ResponseHead {
  status: number;
  headers: Record<string, string | string[]>;
}

const isBrowserResponse = (r: unknown): r is BrowserResponse =>
  typeof r === 'object' && r !== null && typeof (r as BrowserResponse).status === 'function';

function pick(
  all: Record<string, string | string[] | undefined>,
  names: ReadonlySet<string>,
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(all)) {
    const key = name.toLowerCase();
    // An undefined value (Node leaves some) is left out rather than making the whole event invalid.
    if (!names.has(key) || value === undefined) continue;
    out[key] = Array.isArray(value) ? value.filter((v) => typeof v === 'string') : String(value);
  }
  return out;
}

/** Status and classification headers of a response, or undefined when the context holds none. */
export async function responseHead(
  response: unknown,
  headerNames: ReadonlySet<string>,
): Promise<ResponseHead | undefined> {
  if (isBrowserResponse(response)) {
    let all: Record<string, string>;
    try {
      // allHeaders() includes set-cookie, which headers() leaves out.
      all = response.allHeaders ? await response.allHeaders() : response.headers();
    } catch {
      all = response.headers();
    }
    return { status: response.status(), headers: pick(all, headerNames) };
  }
  const node = response as NodeResponse | undefined;
  if (!node || typeof node.statusCode !== 'number') return undefined;
  return { status: node.statusCode, headers: pick(node.headers ?? {}, headerNames) };
}

export interface BodyObservation {
  bytes?: number;
  bodySample?: string;
  title?: string;
}

/**
 * The sample the classifier needs (`bodySampleOf`: the whole page, or its head and tail) and the full size.
 * A Buffer is decoded only where the sample comes from: its first and last BODY_SAMPLE_CHARS × 4 bytes at most
 * (4 bytes per character at most; a character cut at either edge becomes U+FFFD, which no marker contains).
 */
export function sampleOf(body: string | Buffer): { bytes: number; bodySample: string } {
  if (typeof body === 'string')
    return { bytes: Buffer.byteLength(body), bodySample: bodySampleOf(body, BODY_SAMPLE_CHARS) };
  const window = BODY_SAMPLE_CHARS * 4;
  if (body.length <= 2 * window)
    return { bytes: body.length, bodySample: bodySampleOf(body.toString('utf8'), BODY_SAMPLE_CHARS) };
  const ends = `${body.subarray(0, window).toString('utf8')}${body.subarray(body.length - window).toString('utf8')}`;
  return { bytes: body.length, bodySample: bodySampleOf(ends, BODY_SAMPLE_CHARS) };
}

interface CheerioLike {
  (selector: string): { first(): { text(): string } };
}

export interface BodySource {
  response?: unknown;
  body?: unknown;
  page?: unknown;
  $?: unknown;
}

/** Body size, sample and title from a crawling context after navigation. Failures leave fields out. */
export async function observeBody(ctx: BodySource): Promise<BodyObservation> {
  const out: BodyObservation = {};
  if (typeof ctx.body === 'string' || Buffer.isBuffer(ctx.body)) {
    Object.assign(out, sampleOf(ctx.body));
    if (typeof ctx.$ === 'function') {
      try {
        const title = (ctx.$ as CheerioLike)('title').first().text();
        if (title.trim() !== '') out.title = title;
      } catch {
        // No title: the classifier reads it from the sample.
      }
    }
    return out;
  }
  const page = ctx.page as PageLike | undefined;
  if (page && typeof page.content === 'function') {
    try {
      Object.assign(out, sampleOf(await page.content()));
    } catch {
      // A page that navigated away or closed: no sample.
    }
    if (isBrowserResponse(ctx.response) && typeof ctx.response.body === 'function') {
      try {
        // The bytes on the wire (page.content() is the DOM after scripts ran).
        out.bytes = (await ctx.response.body()).length;
      } catch {
        // Redirect responses have no body; keep the DOM's size.
      }
    }
    try {
      const title = await page.title();
      if (title.trim() !== '') out.title = title;
    } catch {
      // As above.
    }
  }
  return out;
}
