/**
 * The zod schema of a site's classifier settings (config.ts has the types and the parser). Built on first
 * use; zod-typed, so reached by its deep path only (`@target-health/crawler/events/config-schema`).
 */
import * as z from '../zod';
import { lazy } from '../lazy';
import { OUTCOMES } from './event-limits';
import { expecting } from './zod-issues';
import { markerSpecSchema } from './marker-spec-schema';
import { BUILT_IN_MARKER_IDS } from './markers';
import { CLASSIFIER_DEFAULTS } from './config-defaults';
import type { CONFIG_FIELDS, SiteClassifierConfig, SiteClassifierConfigInput } from './config';

function buildSiteClassifierConfigSchema() {
  const OUTCOME_HELP = `one of ${OUTCOMES.join(', ')}`;
  const ratio = (what: string) => z.number(expecting(what)).gt(0, expecting(what)).max(1, expecting(what));
  const positiveInt = (what: string) => z.number(expecting(what)).int(expecting(what)).min(1, expecting(what));

  const config = z
    .strictObject(
      {
        extraMarkers: z.array(markerSpecSchema(), expecting('a list of marker objects')).max(200).default([]),
        disabledMarkers: z
          .array(z.string(expecting('a built-in marker id')), expecting('a list of built-in marker ids'))
          .default([]),
        statusOverrides: z
          .record(
            z.string().regex(/^[1-9]\d\d$/, expecting('an HTTP status code like "404" as the key')),
            z.enum(OUTCOMES, expecting(OUTCOME_HELP)),
            expecting('an object mapping status codes to outcomes, like {"404": "soft_block"}'),
          )
          .default({}),
        sizeRatio: ratio('a fraction of the median size, > 0 and ≤ 1 (default 0.2)').default(
          CLASSIFIER_DEFAULTS.sizeRatio,
        ),
        minSizeSamples: positiveInt('a sample count ≥ 1 (default 20)').default(CLASSIFIER_DEFAULTS.minSizeSamples),
        minUsualRecordsRate: ratio('a rate > 0 and ≤ 1 (default 0.9)').default(CLASSIFIER_DEFAULTS.minUsualRecordsRate),
        minRecordsSamples: positiveInt('a sample count ≥ 1 (default 20)').default(
          CLASSIFIER_DEFAULTS.minRecordsSamples,
        ),
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
        if (clash)
          ctx.addIssue({ code: 'custom', path: ['extraMarkers', i, 'id'], message: `"${marker.id}" ${clash}` });
        seen.add(marker.id);
      });
    });
  return config;
}

/** The settings schema (built on the first call, then the same object). */
export const siteClassifierConfigSchema = lazy(buildSiteClassifierConfigSchema);

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Schema = ReturnType<typeof buildSiteClassifierConfigSchema>;
const outputIsConfig: Same<z.output<Schema>, SiteClassifierConfig> = true;
const inputIsConfigInput: Same<z.input<Schema>, SiteClassifierConfigInput> = true;
const fieldsAreListed: Same<keyof z.output<Schema>, (typeof CONFIG_FIELDS)[''][number]> = true;
void [outputIsConfig, inputIsConfigInput, fieldsAreListed];
