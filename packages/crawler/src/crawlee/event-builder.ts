/**
 * Builds the request-outcome event of one attempt and makes sure it is valid before it reaches the
 * recorder: an optional field the schema refuses (a user's page type with a space, an odd header) is
 * left out and named, rather than the whole event refused later by the store.
 */
import {
  parseEvent,
  type Extraction,
  type NetworkError,
  type RequestOutcomeEvent,
  type RequestOutcomeEventInput,
  type Route,
} from '../events/event';

export interface AttemptFacts {
  ts: number;
  site: string;
  route: Route;
  pageType?: string | undefined;
  canary: boolean;
  retries: number;
  latencyMs: number;
  status?: number | undefined;
  networkError?: NetworkError | undefined;
  headers?: Record<string, string | string[]> | undefined;
  bytes?: number | undefined;
  bodySample?: string | undefined;
  title?: string | undefined;
  extraction?: Extraction | undefined;
}

/** Fields an event is still worth sending without (everything but ts, site, status/networkError, latency). */
const DROPPABLE = new Set([
  'route',
  'pageType',
  'headers',
  'bytes',
  'bodySample',
  'title',
  'extraction',
  'retries',
  'canary',
]);

export type BuiltEvent =
  | { ok: true; input: RequestOutcomeEventInput; event: RequestOutcomeEvent; removed: string[] }
  | { ok: false; errors: string[] };

function toInput(facts: AttemptFacts): Record<string, unknown> {
  const input: Record<string, unknown> = {
    ts: facts.ts,
    site: facts.site,
    route: facts.route,
    latencyMs: Math.max(0, Math.round(facts.latencyMs)),
    retries: facts.retries,
  };
  if (facts.canary) input.canary = true;
  const optional = [
    'pageType',
    'status',
    'networkError',
    'headers',
    'bytes',
    'bodySample',
    'title',
    'extraction',
  ] as const;
  for (const key of optional) if (facts[key] !== undefined) input[key] = facts[key];
  return input;
}

/** The top-level field an error line (`route.country: …`) is about. */
const fieldOf = (line: string): string => line.slice(0, line.indexOf(':')).split(/[.[]/)[0] ?? '';

export function buildEvent(facts: AttemptFacts): BuiltEvent {
  const input = toInput(facts);
  const removed: string[] = [];
  for (let pass = 0; pass < 2; pass++) {
    const parsed = parseEvent(input);
    if (parsed.ok)
      return { ok: true, input: input as unknown as RequestOutcomeEventInput, event: parsed.event, removed };
    const fields = new Set(parsed.errors.map(fieldOf));
    if (pass === 1 || [...fields].some((f) => !DROPPABLE.has(f))) return { ok: false, errors: parsed.errors };
    for (const f of fields) delete input[f];
    removed.push(...parsed.errors);
  }
  return { ok: false, errors: ['unreachable'] };
}

/** Validates what a request handler reports through `th.extraction()`; throws one line naming the field. */
export function checkExtraction(extraction: unknown): Extraction {
  const parsed = parseEvent({ ts: Date.now(), site: 'example.com', status: 200, latencyMs: 0, extraction });
  if (parsed.ok && parsed.event.extraction) return parsed.event.extraction;
  const line = parsed.ok
    ? 'extraction: must be an object like {"result": "ok", "validRecords": 12}'
    : (parsed.errors.find((e) => e.startsWith('extraction')) ?? parsed.errors[0]);
  throw new Error(`targetHealth.extraction: ${line}`);
}
