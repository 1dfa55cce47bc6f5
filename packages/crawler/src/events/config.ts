/**
 * Per-site classifier settings. Sites differ: one answers 404 instead of 403 to crawlers, another puts a
 * home-grown captcha at /verify. Operators describe that here, validated up front so a typo in a marker
 * id fails loudly instead of silently leaving a marker on.
 */
import { z } from 'zod';
import { OUTCOMES } from './event';
import { expecting, issueLines } from './zod-issues';
import { MarkerSpec } from './marker-spec';
import { BUILT_IN_MARKER_IDS } from './markers';

export const CLASSIFIER_DEFAULTS = {
  /** A 2xx smaller than sizeRatio × the (site, page type) median is a soft block... */
  sizeRatio: 0.2,
  /** ...once the median rests on at least this many samples. */
  minSizeSamples: 20,
  /** An empty extraction is a soft block where the page type yields records at least this often... */
  minUsualRecordsRate: 0.9,
  /** ...over at least this many samples. */
  minRecordsSamples: 20,
  /** Pages up to this size corroborate weak markers (real block pages are small). */
  shortPageBytes: 8192,
} as const;

const OUTCOME_HELP = `one of ${OUTCOMES.join(', ')}`;
const ratio = (what: string) =>
  z.number(expecting(what)).gt(0, expecting(what)).max(1, expecting(what));
const positiveInt = (what: string) => z.number(expecting(what)).int(expecting(what)).min(1, expecting(what));

export const SiteClassifierConfig = z
  .strictObject(
    {
      extraMarkers: z.array(MarkerSpec, expecting('a list of marker objects')).max(200).default([]),
      disabledMarkers: z.array(z.string(expecting('a built-in marker id')), expecting('a list of built-in marker ids')).default([]),
      statusOverrides: z
        .record(
          z.string().regex(/^[1-9]\d\d$/, expecting('an HTTP status code like "404" as the key')),
          z.enum(OUTCOMES, expecting(OUTCOME_HELP)),
          expecting('an object mapping status codes to outcomes, like {"404": "soft_block"}'),
        )
        .default({}),
      sizeRatio: ratio('a fraction of the median size, > 0 and ≤ 1 (default 0.2)').default(CLASSIFIER_DEFAULTS.sizeRatio),
      minSizeSamples: positiveInt('a sample count ≥ 1 (default 20)').default(CLASSIFIER_DEFAULTS.minSizeSamples),
      minUsualRecordsRate: ratio('a rate > 0 and ≤ 1 (default 0.9)').default(CLASSIFIER_DEFAULTS.minUsualRecordsRate),
      minRecordsSamples: positiveInt('a sample count ≥ 1 (default 20)').default(CLASSIFIER_DEFAULTS.minRecordsSamples),
      shortPageBytes: z
        .number(expecting('a size in bytes, an integer ≥ 0 (default 8192)'))
        .int(expecting('a size in bytes, an integer ≥ 0 (default 8192)'))
        .min(0, expecting('a size in bytes, an integer ≥ 0 (default 8192)'))
        .default(CLASSIFIER_DEFAULTS.shortPageBytes),
    },
    expecting('an object of classifier settings'),
  )
  .superRefine((config, ctx) => {
    config.disabledMarkers.forEach((id, i) => {
      if (!BUILT_IN_MARKER_IDS.includes(id)) {
        ctx.addIssue({
          code: 'custom',
          path: ['disabledMarkers', i],
          message: `unknown built-in marker id "${id}" (see docs/classification.md for the catalogue)`,
        });
      }
    });
    const seen = new Set<string>();
    config.extraMarkers.forEach((marker, i) => {
      const clash = BUILT_IN_MARKER_IDS.includes(marker.id)
        ? 'is a built-in marker id; pick another (to replace a built-in, disable it and add yours)'
        : seen.has(marker.id)
          ? 'is used by an earlier extra marker'
          : undefined;
      if (clash) ctx.addIssue({ code: 'custom', path: ['extraMarkers', i, 'id'], message: `"${marker.id}" ${clash}` });
      seen.add(marker.id);
    });
  });

export type SiteClassifierConfig = z.output<typeof SiteClassifierConfig>;
export type SiteClassifierConfigInput = z.input<typeof SiteClassifierConfig>;

const CONFIG_FIELDS: Readonly<Record<string, readonly string[]>> = {
  '': [
    'extraMarkers',
    'disabledMarkers',
    'statusOverrides',
    'sizeRatio',
    'minSizeSamples',
    'minUsualRecordsRate',
    'minRecordsSamples',
    'shortPageBytes',
  ],
};

export type ParseConfigResult = { ok: true; config: SiteClassifierConfig } | { ok: false; errors: string[] };

export function parseSiteClassifierConfig(input: unknown): ParseConfigResult {
  const result = SiteClassifierConfig.safeParse(input);
  if (result.success) return { ok: true, config: result.data };
  const knownMarkerFields = Object.keys(MarkerSpec.shape);
  return {
    ok: false,
    errors: issueLines(result.error.issues, {
      root: 'config',
      knownKeys: (path) => CONFIG_FIELDS[path] ?? (/^extraMarkers\[\d+\]$/.test(path) ? knownMarkerFields : undefined),
    }),
  };
}

/** Thrown by compileClassifier for an invalid configuration; `errors` are `field: message` strings. */
export class SiteClassifierConfigError extends Error {
  constructor(readonly errors: readonly string[]) {
    super(`invalid site classifier config: ${errors.join('; ')}`);
    this.name = 'SiteClassifierConfigError';
  }
}
