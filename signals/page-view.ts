/**
 * The part of a response the markers look at, prepared once per classification: the body's first
 * {@link BODY_SCAN_CHARS} characters lower-cased a single time, the title, lower-cased headers.
 */
import { BODY_SAMPLE_CHARS, type RequestOutcomeEvent } from './event';
import { type NeedleHits } from './needle-scan';

export const BODY_SCAN_CHARS = BODY_SAMPLE_CHARS;

export interface PageView {
  /** Lower-cased body prefix ('' when the crawler sent none). */
  body: string;
  /** Lower-cased title: the event's `title`, else the body's <title>; undefined when neither. */
  title: string | undefined;
  /** Lower-case names and values. */
  headers: Readonly<Record<string, string>>;
  status: number | undefined;
  /** Page size for "short page" checks: `bytes` when sent, else the sample's length. */
  size: number | undefined;
  /** The catalogue's needles found in `body` by its one-pass scan (set by the classifier). */
  hits?: NeedleHits | undefined;
}

type ViewSource = Pick<RequestOutcomeEvent, 'bodySample' | 'title' | 'headers' | 'status' | 'bytes'>;

export function pageView(event: ViewSource): PageView {
  const raw = event.bodySample ?? '';
  const body = raw.length > BODY_SCAN_CHARS ? raw.slice(0, BODY_SCAN_CHARS).toLowerCase() : raw.toLowerCase();
  const headers: Record<string, string> = {};
  if (event.headers) {
    for (const [name, value] of Object.entries(event.headers)) headers[name.toLowerCase()] = value.toLowerCase();
  }
  const title = event.title !== undefined && event.title.trim() !== '' ? cleanTitle(event.title.toLowerCase()) : titleOf(body);
  return {
    body,
    title,
    headers,
    status: event.status,
    size: event.bytes ?? (event.bodySample !== undefined ? raw.length : undefined),
  };
}

const TITLE = /<title\b[^>]*>([^<]{0,512})/;

function titleOf(lowerBody: string): string | undefined {
  const match = TITLE.exec(lowerBody);
  return match?.[1] === undefined ? undefined : cleanTitle(match[1]);
}

const NAMED_ENTITIES: Readonly<Record<string, string>> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  hellip: '…',
  ndash: '–',
  mdash: '—',
  // The accented letters of the languages the generic titles are written in (docs/classification.md).
  aacute: 'á',
  agrave: 'à',
  acirc: 'â',
  atilde: 'ã',
  auml: 'ä',
  ccedil: 'ç',
  eacute: 'é',
  egrave: 'è',
  ecirc: 'ê',
  iacute: 'í',
  ntilde: 'ñ',
  oacute: 'ó',
  ocirc: 'ô',
  otilde: 'õ',
  ouml: 'ö',
  uacute: 'ú',
  uuml: 'ü',
  szlig: 'ß',
  iexcl: '¡',
  iquest: '¿',
  rsquo: '’',
};

/** White space that collapsing would change: a run, a character other than a space, or at either end. */
const UNTIDY_SPACE = /\s\s|[^\S ]|^\s|\s$/;

/** Decodes the few entities titles use and collapses white space. */
function cleanTitle(title: string): string {
  // Most titles have neither an entity nor runs of white space: skip the two replaces (every page pays them).
  if (!title.includes('&') && !UNTIDY_SPACE.test(title)) return title;
  return title
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/g, (whole, code: string) => {
      if (code.startsWith('#x')) return safeCodePoint(parseInt(code.slice(2), 16)) ?? whole;
      if (code.startsWith('#')) return safeCodePoint(parseInt(code.slice(1), 10)) ?? whole;
      return NAMED_ENTITIES[code] ?? whole;
    })
    .replace(/\s+/g, ' ')
    .trim();
}

function safeCodePoint(cp: number): string | undefined {
  return Number.isInteger(cp) && cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : undefined;
}
