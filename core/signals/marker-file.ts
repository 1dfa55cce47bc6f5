/**
 * A deployment's marker file (`TARGET_HEALTH_MARKERS`, docs/classification.md "Marker file"): markers a
 * deployment adds to the built-in catalogue, built-in markers it replaces (same id) and built-in markers
 * it turns off — so a new block page is recognised without waiting for a release.
 *
 *   { "version": 1, "markers": [MarkerSpec…], "disable": ["built-in-id"…] }
 *
 * Pure: validation (zod; every problem a `field: message` line, e.g. `markers[3].bodyRegex: has a
 * quantified group…`) and the merge into a {@link MarkerCatalogue}. Reading and watching the file is
 * server/config/marker-catalogue.ts.
 */
import { z } from 'zod';
import { expecting, issueLines } from '@target-health/crawler/events/zod-issues';
import { compileCatalogue, type MarkerCatalogue } from '@target-health/crawler/events/classify';
import { MARKER_FIELDS, type MarkerSpecInput } from '@target-health/crawler/events/marker-spec';
import { markerSpecSchema } from '@target-health/crawler/events/marker-spec-schema';
import { BUILT_IN_MARKERS } from '@target-health/crawler/events/markers';

export const MARKER_FILE_VERSION = 1;
const MAX_FILE_MARKERS = 500;

export const MarkerFile = z.strictObject(
  {
    version: z.literal(MARKER_FILE_VERSION, expecting(`the file format version, ${MARKER_FILE_VERSION}`)),
    markers: z
      .array(markerSpecSchema(), expecting('a list of marker objects'))
      .max(MAX_FILE_MARKERS, expecting(`at most ${MAX_FILE_MARKERS} markers`))
      .default([]),
    disable: z
      .array(z.string(expecting('a built-in marker id')), expecting('a list of built-in marker ids'))
      .default([]),
  },
  expecting('an object like {"version": 1, "markers": [...], "disable": [...]}'),
);
export type MarkerFile = z.output<typeof MarkerFile>;

export type ParseMarkerFileResult = { ok: true; file: MarkerFile } | { ok: false; errors: string[] };

/** Validates a parsed marker file against `builtIn` (the ids it may replace or disable). */
export function parseMarkerFile(
  input: unknown,
  builtIn: readonly MarkerSpecInput[] = BUILT_IN_MARKERS,
): ParseMarkerFileResult {
  const parsed = MarkerFile.safeParse(input);
  const knownMarkerFields = [...MARKER_FIELDS];
  if (!parsed.success) {
    return {
      ok: false,
      errors: issueLines(parsed.error.issues, {
        root: 'marker file',
        knownKeys: (path) =>
          path === ''
            ? ['version', 'markers', 'disable']
            : /^markers\[\d+\]$/.test(path)
              ? knownMarkerFields
              : undefined,
      }),
    };
  }
  const file = parsed.data;
  const builtInIds = new Set(builtIn.map((m) => m.id));
  const errors: string[] = [];
  const fileIds = new Map<string, number>();
  file.markers.forEach((m, i) => {
    const earlier = fileIds.get(m.id);
    if (earlier !== undefined)
      errors.push(`markers[${i}].id: "${m.id}" is used by markers[${earlier}] too; each id once`);
    else fileIds.set(m.id, i);
  });
  file.disable.forEach((id, i) => {
    if (!builtInIds.has(id))
      errors.push(`disable[${i}]: unknown built-in marker id "${id}" (see docs/classification.md for the catalogue)`);
    const replaced = fileIds.get(id);
    if (replaced !== undefined)
      errors.push(`disable[${i}]: "${id}" is also replaced by markers[${replaced}]; keep one of the two`);
  });
  return errors.length > 0 ? { ok: false, errors } : { ok: true, file };
}

/**
 * The markers a deployment classifies with: the file's new markers first (the deployment's own evidence,
 * as a site's markers come before the built-ins), then the built-in catalogue in its order with each
 * marker the file replaces (same id) in its place and the disabled ones left out.
 */
export function mergeMarkers(builtIn: readonly MarkerSpecInput[], file: MarkerFile): MarkerSpecInput[] {
  const replacements = new Map(file.markers.map((m) => [m.id, m]));
  const builtInIds = new Set(builtIn.map((m) => m.id));
  const disabled = new Set(file.disable);
  const added = file.markers.filter((m) => !builtInIds.has(m.id));
  const kept = builtIn.filter((m) => !disabled.has(m.id)).map((m) => replacements.get(m.id) ?? m);
  return [...added, ...kept];
}

/** What a marker file does to the built-in catalogue, for logs and `markers check`. */
export function markerFileSummary(
  builtIn: readonly MarkerSpecInput[],
  file: MarkerFile,
): { added: string[]; replaced: string[]; disabled: string[] } {
  const builtInIds = new Set(builtIn.map((m) => m.id));
  return {
    added: file.markers.filter((m) => !builtInIds.has(m.id)).map((m) => m.id),
    replaced: file.markers.filter((m) => builtInIds.has(m.id)).map((m) => m.id),
    disabled: [...file.disable],
  };
}

/** The catalogue of a validated marker file, compiled once. */
export function catalogueOf(
  file: MarkerFile,
  source: string,
  builtIn: readonly MarkerSpecInput[] = BUILT_IN_MARKERS,
): MarkerCatalogue {
  return compileCatalogue(mergeMarkers(builtIn, file), source);
}

/** JSON text → catalogue, or the problems as `field: message` lines (the first line names a JSON syntax error). */
export function catalogueFromText(
  text: string,
  source: string,
  builtIn: readonly MarkerSpecInput[] = BUILT_IN_MARKERS,
): { ok: true; catalogue: MarkerCatalogue; file: MarkerFile } | { ok: false; errors: string[] } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { ok: false, errors: [`is not valid JSON (${err instanceof Error ? err.message : String(err)})`] };
  }
  const parsed = parseMarkerFile(raw, builtIn);
  if (!parsed.ok) return parsed;
  return { ok: true, catalogue: catalogueOf(parsed.file, source, builtIn), file: parsed.file };
}
