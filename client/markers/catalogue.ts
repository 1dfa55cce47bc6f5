/**
 * The marker catalogue a CLI command classifies with: the deployment's marker file when
 * TARGET_HEALTH_MARKERS is set (read once: a command is short-lived), else the built-in catalogue.
 */
import { loadMarkerFilePath } from '../../server/config/env';
import { loadMarkerFile } from '../../server/config/marker-catalogue';
import { BUILT_IN_CATALOGUE, type MarkerCatalogue } from '@target-health/crawler/events/classify';

export function commandCatalogue(env: Record<string, string | undefined> = process.env): MarkerCatalogue {
  const path = loadMarkerFilePath(env);
  return path === undefined ? BUILT_IN_CATALOGUE : loadMarkerFile(path);
}
