/**
 * The part of a response the markers look at, prepared once per classification: the body's first
 * {@link BODY_SCAN_CHARS} characters as sent (the needle scanner folds case itself, regexes take the `i`
 * flag), a lower-cased copy made only when something reads it (where a needle was found, for
 * explanations), the title, lower-cased headers.
 */
import { BODY_SAMPLE_CHARS, type RequestOutcomeEvent } from './event';
import { type NeedleHits } from './needle-scan';

export const BODY_SCAN_CHARS = BODY_SAMPLE_CHARS;

export interface PageView {
  /** The body prefix as sent ('' when the crawler sent none). */
  readonly raw: string;
  /** The body prefix lower-cased (made on first read). */
  readonly body: string;
  /** Lower-cased title: the event's `title`, else the body's <title>; undefined when neither. */
  readonly title: string | undefined;
  /** Lower-case names and values. */
  readonly headers: Readonly<Record<string, string>>;
  readonly status: number | undefined;
  /** Page size for "short page" checks: `bytes` when sent, else the sample's length. */
  readonly size: number | undefined;
  /** The catalogue's needles found in `raw` by its one-pass scan (set by the classifier). */
  hits?: NeedleHits | undefined;
}

type ViewSource = Pick<RequestOutcomeEvent, 'bodySample' | 'title' | 'headers' | 'status' | 'bytes'>;

class LazyPageView implements PageView {
  hits?: NeedleHits | undefined;
  private lower: string | undefined;

  constructor(
    readonly raw: string,
    readonly title: string | undefined,
    readonly headers: Readonly<Record<string, string>>,
    readonly status: number | undefined,
    readonly size: number | undefined,
  ) {}

  get body(): string {
    return (this.lower ??= this.raw.toLowerCase());
  }
}

export function pageView(event: ViewSource): PageView {
  const sample = event.bodySample ?? '';
  const raw = sample.length > BODY_SCAN_CHARS ? sample.slice(0, BODY_SCAN_CHARS) : sample;
  const headers: Record<string, string> = {};
  if (event.headers) {
    for (const [name, value] of Object.entries(event.headers)) headers[name.toLowerCase()] = value.toLowerCase();
  }
  const title =
    event.title !== undefined && event.title.trim() !== '' ? cleanTitle(event.title.toLowerCase()) : titleOf(raw);
  return new LazyPageView(
    raw,
    title,
    headers,
    event.status,
    event.bytes ?? (event.bodySample !== undefined ? sample.length : undefined),
  );
}

const TITLE = /<title\b[^>]*>([^<]{0,512})/i;

function titleOf(body: string): string | undefined {
  const match = TITLE.exec(body);
  return match?.[1] === undefined ? undefined : cleanTitle(match[1].toLowerCase());
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
