/**
 * The zod schema of a content marker (marker-spec.ts has its types and the evidence rules). Built on
 * first use; zod-typed, so reached by its deep path only (`@target-health/crawler/events/marker-spec-schema`).
 */
import * as z from '../zod';
import { lazy } from '../lazy';
import { expecting } from './zod-issues';
import {
  MARKER_EVIDENCE,
  MARKER_ID,
  MARKER_KINDS,
  regexProblem,
  type MarkerField,
  type MarkerSpec,
  type MarkerSpecInput,
} from './marker-spec';

function buildMarkerSpecSchema() {
  const regexSource = z.string(expecting('a regular expression source (string)')).superRefine((source, ctx) => {
    const problem = regexProblem(source);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  });

  const needle = z
    .string(expecting('a non-empty text to look for'))
    .min(3, expecting('a text of at least 3 characters to look for'))
    .max(200, expecting('a text of at most 200 characters'));
  const needles = z.array(needle, expecting('a list of texts')).min(1, expecting('a non-empty list of texts')).max(50);

  const headerCondition = z.strictObject(
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

  const markerSpec = z
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
        headers: z.array(headerCondition, expecting('a list of header conditions')).min(1).max(10).optional(),
        /** Only applies to responses with one of these statuses. */
        statuses: z
          .array(z.number().int().min(100).max(999), expecting('a list of HTTP status codes (100–999) like [403, 503]'))
          .min(1)
          .optional(),
        note: z.string().max(500).optional(),
      },
      expecting(
        'a marker object like {"id": "shop-captcha", "vendor": "shop", "kind": "challenge", "bodyAny": ["/captcha/"]}',
      ),
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
  return markerSpec;
}

/** The marker schema (built on the first call, then the same object). */
export const markerSpecSchema = lazy(buildMarkerSpecSchema);

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Schema = ReturnType<typeof buildMarkerSpecSchema>;
const outputIsMarkerSpec: Same<z.output<Schema>, MarkerSpec> = true;
const inputIsMarkerSpecInput: Same<z.input<Schema>, MarkerSpecInput> = true;
const fieldsAreMarkerFields: Same<keyof z.output<Schema>, MarkerField> = true;
void [outputIsMarkerSpec, inputIsMarkerSpecInput, fieldsAreMarkerFields];
