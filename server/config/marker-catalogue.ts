/**
 * The deployment's marker catalogue, from the file `TARGET_HEALTH_MARKERS` names (core/signals/marker-file.ts),
 * re-read without a restart: the file's modification time and size are polled (fs.watchFile: it survives
 * editors that save by replacing the file, where fs.watch loses track) and a change is read after a short
 * debounce, so a file written in several steps is read once it is complete. A new file that is bad —
 * unreadable, not JSON, an invalid marker — is refused and logged with the field named, and the last
 * good catalogue stays in use. At start-up there is no last good one: a bad file is a one-line error.
 */
import { readFileSync, unwatchFile, watchFile, type Stats } from 'node:fs';
import pino from 'pino';
import { UserError } from '../../core/common/user-error';
import { createLogger, type Logger } from '../logging/logger';
import { BUILT_IN_CATALOGUE, type MarkerCatalogue } from '@target-health/crawler/events/classify';
import { catalogueFromText, markerFileSummary } from '../../core/signals/marker-file';
import { BUILT_IN_MARKERS } from '@target-health/crawler/events/markers';
import { loadLogLevel, loadMarkerFilePath } from './env';

export type ReadCatalogueResult =
  | { ok: true; catalogue: MarkerCatalogue; summary: ReturnType<typeof markerFileSummary> }
  | { ok: false; errors: string[] };

/** Reads and validates a marker file; problems are `field: message` lines (the file is named by the caller). */
export function readMarkerFile(path: string): ReadCatalogueResult {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return { ok: false, errors: [`cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`] };
  }
  const result = catalogueFromText(text, path);
  return result.ok
    ? { ok: true, catalogue: result.catalogue, summary: markerFileSummary(BUILT_IN_MARKERS, result.file) }
    : result;
}

/** Reads a marker file or throws a one-line {@link UserError} naming `what` (the variable or argument). */
export function loadMarkerFile(path: string, what = 'TARGET_HEALTH_MARKERS'): MarkerCatalogue {
  const result = readMarkerFile(path);
  if (!result.ok) throw new UserError(`${what}: ${path}: ${result.errors.slice(0, 5).join('; ')}`);
  return result.catalogue;
}

export interface CatalogueSource {
  /** The catalogue to classify with now (the same object until the file changes). */
  readonly current: () => MarkerCatalogue;
  /** Stops watching. */
  readonly close: () => void;
}

export interface WatchOptions {
  logger: Logger;
  /** How often the file's mtime and size are checked (default 1 s). */
  pollMs?: number;
  /** How long after a change the file is read (default 250 ms; further changes restart the wait). */
  debounceMs?: number;
}

/** Watches `path`; throws a UserError when the file is bad at the start. */
export function watchMarkerFile(path: string, options: WatchOptions): CatalogueSource {
  const { logger } = options;
  let catalogue = loadMarkerFile(path);
  logger.info({ markerFile: path, markers: catalogue.markers.length }, 'marker file loaded');
  let timer: NodeJS.Timeout | undefined;
  const reload = () => {
    timer = undefined;
    const result = readMarkerFile(path);
    if (!result.ok) {
      logger.error(
        { markerFile: path, errors: result.errors.slice(0, 10) },
        `marker file refused, the previous markers stay in use: ${result.errors[0] ?? ''}`,
      );
      return;
    }
    catalogue = result.catalogue;
    logger.info({ markerFile: path, markers: catalogue.markers.length, ...result.summary }, 'marker file re-read');
  };
  const onChange = (now: Stats, before: Stats) => {
    if (now.mtimeMs === before.mtimeMs && now.size === before.size && now.ino === before.ino) return;
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(reload, options.debounceMs ?? 250);
    timer.unref();
  };
  // persistent: false — watching must never keep a finished process alive.
  watchFile(path, { interval: options.pollMs ?? 1_000, persistent: false }, onChange);
  return {
    current: () => catalogue,
    close: () => {
      unwatchFile(path, onChange);
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}

let deployment: CatalogueSource | undefined;

/**
 * The process's catalogue: the built-in one, or — with TARGET_HEALTH_MARKERS set — the file's, watched
 * from the first call on (logs go to stderr: stdout may be a command's JSON). Every place that classifies
 * ingested traffic (the ingester's context cache, the canary runner) asks here.
 */
export function deploymentCatalogue(env: Record<string, string | undefined> = process.env): CatalogueSource {
  if (deployment !== undefined) return deployment;
  const path = loadMarkerFilePath(env);
  if (path === undefined) {
    deployment = { current: () => BUILT_IN_CATALOGUE, close: () => undefined };
  } else {
    const logger = createLogger(loadLogLevel(env), 'target-health', pino.destination(2));
    deployment = watchMarkerFile(path, { logger });
  }
  return deployment;
}
