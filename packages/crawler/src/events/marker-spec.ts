/**
 * The shape of a content marker: data, not code, so per-site markers can live in JSON configuration and
 * be validated like the built-in catalogue. All text comparisons are case-insensitive (the classifier
 * lower-cases the body once); regexes always get the `i` flag.
 */
import { z } from 'zod';
import { expecting } from './zod-issues';

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
  if (NESTED_QUANTIFIER.test(source)) return 'has a quantified group containing a quantifier (risk of catastrophic backtracking); simplify it';
  try {
    new RegExp(source, 'i');
  } catch (err) {
    return `is not a valid regular expression (${err instanceof Error ? err.message : String(err)})`;
  }
  return undefined;
}

const regexSource = z.string(expecting('a regular expression source (string)')).superRefine((source, ctx) => {
  const problem = regexProblem(source);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
});

const needle = z
  .string(expecting('a non-empty text to look for'))
  .min(3, expecting('a text of at least 3 characters to look for'))
  .max(200, expecting('a text of at most 200 characters'));
const needles = z.array(needle, expecting('a list of texts')).min(1, expecting('a non-empty list of texts')).max(50);

export const HeaderCondition = z.strictObject(
  {
    name: z
      .string(expecting('a header name like "cf-mitigated"'))
      .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, expecting('a header name like "cf-mitigated"'))
      .transform((n) => n.toLowerCase()),
    contains: needle.optional(),
    regex: regexSource.optional(),
  },
  expecting('an object like {"name": "cf-mitigated", "contains": "challenge"} (no contains/regex: header present)'),
);
export type HeaderCondition = z.output<typeof HeaderCondition>;

export const MARKER_ID = /^[a-z0-9][a-z0-9._-]{0,63}$/;

export const MarkerSpec = z
  .strictObject(
    {
      id: z
        .string(expecting('a marker id like "shop-captcha" (lower-case letters, digits, . _ -)'))
        .regex(MARKER_ID, expecting('a marker id like "shop-captcha" (lower-case letters, digits, . _ -)')),
      vendor: z.string(expecting('the vendor or product name, e.g. "Cloudflare"')).min(1).max(64),
      kind: z.enum(MARKER_KINDS, expecting('"challenge" or "block"')),
      evidence: z.enum(MARKER_EVIDENCE, expecting('"strong", "weak", "widget" or "script"')).default('strong'),
      /** Every text must appear in the scanned body. */
      bodyAll: needles.optional(),
      /** At least one text must appear in the scanned body. */
      bodyAny: needles.optional(),
      /** Must match the scanned body. */
      bodyRegex: regexSource.optional(),
      /** Must match the page title (the event's `title`, else the body's <title>). */
      titleRegex: regexSource.optional(),
      /** Every condition must hold on the response headers. */
      headers: z.array(HeaderCondition, expecting('a list of header conditions')).min(1).max(10).optional(),
      /** Only applies to responses with one of these statuses. */
      statuses: z
        .array(z.number().int().min(100).max(999), expecting('a list of HTTP status codes (100–999) like [403, 503]'))
        .min(1)
        .optional(),
      note: z.string().max(500).optional(),
    },
    expecting('a marker object like {"id": "shop-captcha", "vendor": "shop", "kind": "challenge", "bodyAny": ["/captcha/"]}'),
  )
  .refine(
    (m) =>
      m.bodyAll !== undefined ||
      m.bodyAny !== undefined ||
      m.bodyRegex !== undefined ||
      m.titleRegex !== undefined ||
      m.headers !== undefined,
    { message: 'needs at least one of bodyAll, bodyAny, bodyRegex, titleRegex, headers' },
  );

export type MarkerSpec = z.output<typeof MarkerSpec>;
export type MarkerSpecInput = z.input<typeof MarkerSpec>;
