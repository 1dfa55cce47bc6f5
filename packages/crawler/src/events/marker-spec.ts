/**
 * The shape of a content marker: data, not code, so per-site markers can live in JSON configuration and
 * be validated like the built-in catalogue. All text comparisons are case-insensitive (the classifier
 * lower-cases the body once); regexes always get the `i` flag.
 */
export const MARKER_KINDS = ['challenge', 'block'] as const;
export type MarkerKind = (typeof MARKER_KINDS)[number];

/**
 * How much a match proves, from most to least (the classifier takes the best-ranked match, docs/classification.md):
 * - `strong`: the marker alone is proof (vendor-specific tokens that never appear on a normal page).
 * - `weak`: text that also appears on normal pages (the words "access denied" in an article, "too many
 *   requests" in a help page). It only counts when corroborated: a non-2xx status, or a short page (at most
 *   `shortPageBytes`).
 * - `widget`: a captcha widget (reCAPTCHA, hCaptcha, Turnstile): it guards login, sign-up and contact forms
 *   on ordinary pages. It only counts on a refusal status (4xx/5xx), or on a short page with nothing else to
 *   fill in (no text, e-mail or password field, no text area or list): the captcha is the page.
 * - `script`: a vendor's script (Incapsula's SWJIYLWA loader, the Kasada SDK, DataDome's tags.js): protected
 *   sites put them on their ordinary pages and app shells too. It only counts on a refusal status, or on a
 *   bare page: short, no title and almost no visible text — the page is nothing but the vendor's script.
 */
export const MARKER_EVIDENCE = ['strong', 'weak', 'widget', 'script'] as const;
export type MarkerEvidence = (typeof MARKER_EVIDENCE)[number];

const MAX_REGEX_LENGTH = 300;
// A quantified group that itself contains a quantifier, e.g. (a+)+ or (\w*x)* — the classic
// catastrophic-backtracking shape. Bodies come from the sites we crawl, so they must not be able to
// stall the classifier through an operator's regex.
const NESTED_QUANTIFIER = /\((?:[^()\\]|\\.)*[+*}](?:[^()\\]|\\.)*\)[+*{]/;

export function regexProblem(source: string): string | undefined {
  if (source.length > MAX_REGEX_LENGTH) return `is longer than ${MAX_REGEX_LENGTH} characters`;
  if (NESTED_QUANTIFIER.test(source))
    return 'has a quantified group containing a quantifier (risk of catastrophic backtracking); simplify it';
  try {
    new RegExp(source, 'i');
  } catch (err) {
    return `is not a valid regular expression (${err instanceof Error ? err.message : String(err)})`;
  }
  return undefined;
}

export const MARKER_ID = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** A condition on one response header (no contains/regex: the header is present). */
export interface HeaderCondition {
  /** Lower-case once parsed. */
  name: string;
  contains?: string;
  regex?: string;
}

/** A content marker as parsed (`evidence` filled in). See marker-spec-schema.ts for the rules. */
export interface MarkerSpec {
  id: string;
  vendor: string;
  kind: MarkerKind;
  evidence: MarkerEvidence;
  /** Every text must appear in the scanned body. */
  bodyAll?: string[];
  /** At least one text must appear in the scanned body. */
  bodyAny?: string[];
  /** Must match the scanned body. */
  bodyRegex?: string;
  /** Must match the page title (the event's `title`, else the body's <title>). */
  titleRegex?: string;
  /** Every condition must hold on the response headers. */
  headers?: HeaderCondition[];
  /** Only applies to responses with one of these statuses. */
  statuses?: number[];
  note?: string;
}

/** A content marker as written (in a marker file or a site's config): `evidence` defaults to "strong". */
export type MarkerSpecInput = Omit<MarkerSpec, 'evidence'> & { evidence?: MarkerEvidence };

/** A marker's fields (marker-spec-schema.ts holds them equal to the schema's). */
export const MARKER_FIELDS: readonly MarkerField[] = [
  'id',
  'vendor',
  'kind',
  'evidence',
  'bodyAll',
  'bodyAny',
  'bodyRegex',
  'titleRegex',
  'headers',
  'statuses',
  'note',
];
export type MarkerField = keyof MarkerSpec;
