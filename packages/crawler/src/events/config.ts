/**
 * Per-site classifier settings. Sites differ: one answers 404 instead of 403 to crawlers, another puts a
 * home-grown captcha at /verify. Operators describe that here, validated up front so a typo in a marker
 * id fails loudly instead of silently leaving a marker on.
 */
import type { Outcome } from './event';
import { issueLines } from './zod-issues';
import { MARKER_FIELDS, type MarkerSpec, type MarkerSpecInput } from './marker-spec';
import { siteClassifierConfigSchema } from './config-schema';

export { CLASSIFIER_DEFAULTS } from './config-defaults';

/** A site's classifier settings as parsed: every default filled in. */
export interface SiteClassifierConfig {
  /** The site's own markers, checked before the catalogue's. */
  extraMarkers: MarkerSpec[];
  /** Built-in marker ids not to use for this site. */
  disabledMarkers: string[];
  /** Status code ("404") → the outcome it means on this site. */
  statusOverrides: Record<string, Outcome>;
  sizeRatio: number;
  minSizeSamples: number;
  minUsualRecordsRate: number;
  minRecordsSamples: number;
  shortPageBytes: number;
}

/** A site's classifier settings as written: everything optional (CLASSIFIER_DEFAULTS). */
export interface SiteClassifierConfigInput {
  extraMarkers?: MarkerSpecInput[];
  disabledMarkers?: string[];
  statusOverrides?: Record<string, Outcome>;
  sizeRatio?: number;
  minSizeSamples?: number;
  minUsualRecordsRate?: number;
  minRecordsSamples?: number;
  shortPageBytes?: number;
}

export const CONFIG_FIELDS: Readonly<Record<string, readonly (keyof SiteClassifierConfig)[]>> = {
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
  const result = siteClassifierConfigSchema().safeParse(input);
  if (result.success) return { ok: true, config: result.data };
  const knownMarkerFields = MARKER_FIELDS;
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
