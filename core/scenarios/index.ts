/**
 * Traffic scenarios with a truth: `generateScenario(name, options)` gives a scenario's truth
 * and its events — a quiet history, then an incident day — as a lazy iterable, for `target-health
 * simulate`, the backtest and tests. Deterministic: the same name, site, days, seed and end give the same
 * events, byte for byte. With the same seed every scenario shares the same background traffic (same
 * counts, routes and pages minute by minute, where its rates are the default ones): scenarios differ only
 * by what they do to it.
 */
import { MAX_TS, MIN_TS, type RequestOutcomeEventInput } from '@target-health/crawler/events/event';
import { tryNormaliseSite } from '@target-health/crawler/events/site';
import { findScenario, SCENARIO_NAMES, SCENARIOS, type ScenarioDefinition } from './catalog';
import { firstMajorityMinute, hardBlocksOf, refusalsOf } from './shares';
import { scenarioTruthSchema, type ScenarioTruth } from './truth';
import {
  countMinute,
  DAY_MS,
  labelledTraffic,
  MINUTE_MS,
  planMinute,
  type LabelledEvent,
  type MinuteCounts,
  type Timeline,
  type TrafficModel,
} from './traffic';
import { hashText, mixSeed, Rng } from './rng';

export { SCENARIO_NAMES } from './catalog';
export type { LabelledEvent } from './traffic';
export type { ScenarioTruth } from './truth';

export const DEFAULT_DAYS = 15;
export const MIN_DAYS = 2;
/** The store takes the last 30 days: 29 whole days end within it even when `end` is up to an hour ago. */
export const MAX_DAYS = 29;
export const DEFAULT_SEED = 1;
export const MAX_SEED = 0xffff_ffff;

export interface ScenarioOptions {
  /** The crawled host (default `<scenario>.sim.example`). */
  site?: string;
  /** History days + the incident day (default 15). */
  days?: number;
  seed?: number;
  /** End of the incident day, epoch ms on a whole minute. */
  end: number;
}

export interface Scenario<E> {
  truth: ScenarioTruth;
  /** Events in time order; each iteration generates them afresh (nothing is held in memory). */
  events: Iterable<E>;
}

/** Bad options: `field` is the option at fault (`scenario`, `site`, `days`, `seed`, `end`). */
export class ScenarioOptionsError extends Error {
  constructor(
    readonly field: 'scenario' | 'site' | 'days' | 'seed' | 'end',
    readonly problem: string,
  ) {
    super(`${field}: ${problem}`);
    this.name = 'ScenarioOptionsError';
  }
}

export interface ScenarioSummary {
  name: string;
  description: string;
}

export function listScenarios(): ScenarioSummary[] {
  return SCENARIOS.map((s) => ({ name: s.name, description: s.description }));
}

export const defaultSite = (name: string): string => `${name}.sim.example`;

interface Resolved {
  definition: ScenarioDefinition;
  host: string;
  seed: number;
  timeline: Timeline;
}

function resolve(name: string, options: ScenarioOptions): Resolved {
  const definition = findScenario(name);
  if (definition === undefined)
    throw new ScenarioOptionsError(
      'scenario',
      `unknown scenario ${JSON.stringify(name).slice(0, 80)}; one of ${SCENARIO_NAMES.join(', ')}`,
    );
  const site = tryNormaliseSite(options.site ?? defaultSite(name));
  if (!site.ok) throw new ScenarioOptionsError('site', site.error.message);
  const days = options.days ?? DEFAULT_DAYS;
  if (!Number.isInteger(days) || days < MIN_DAYS || days > MAX_DAYS) {
    throw new ScenarioOptionsError(
      'days',
      `must be a whole number of days from ${MIN_DAYS} to ${MAX_DAYS} (history days + the incident day; got ` +
        `${String(days)})`,
    );
  }
  const seed = options.seed ?? DEFAULT_SEED;
  if (!Number.isInteger(seed) || seed < 0 || seed > MAX_SEED)
    throw new ScenarioOptionsError('seed', `must be a whole number from 0 to ${MAX_SEED} (got ${String(seed)})`);
  const end = options.end;
  if (!Number.isInteger(end) || end % MINUTE_MS !== 0)
    throw new ScenarioOptionsError('end', 'must be a time on a whole minute, like 2026-03-01T12:00:00Z');
  const historyStart = end - days * DAY_MS;
  if (historyStart < MIN_TS || end > MAX_TS)
    throw new ScenarioOptionsError('end', 'must leave the whole scenario between 2000 and 2100');
  return { definition, host: site.site, seed, timeline: { historyStart, incidentStart: end - DAY_MS, end } };
}

function modelOf(r: Resolved, onset: number | null): TrafficModel {
  const rates = r.definition.rates ?? { history: 6, incident: 40, historyDiurnal: 0.6, incidentDiurnal: 0.25 };
  const pressure = r.definition.pressure;
  return {
    host: r.host,
    protection: r.definition.protection,
    historyRate: rates.history,
    incidentRate: rates.incident,
    historyDiurnal: rates.historyDiurnal,
    incidentDiurnal: rates.incidentDiurnal,
    ...(pressure
      ? { pressure: (request, timeline) => pressure(request, onset ?? Number.POSITIVE_INFINITY, timeline) }
      : {}),
  };
}

/** The onset: the scenario's offset plus a seeded jitter of up to 45 minutes. */
function onsetOf(r: Resolved): number | null {
  const offset = r.definition.onsetAfterMs?.(r.timeline);
  if (offset === undefined) return null;
  const rng = new Rng(mixSeed(r.seed, hashText(r.definition.name), 3));
  const jitter = r.definition.onsetOnMinute ? rng.int(0, 44) * MINUTE_MS : rng.int(0, 45 * 60 - 1) * 1000;
  return Math.max(r.timeline.historyStart, r.timeline.incidentStart + offset + jitter);
}

const iso = (ms: number): string => new Date(ms).toISOString();

function truthOf(r: Resolved, model: TrafficModel, onset: number | null): ScenarioTruth {
  const { timeline, seed, definition } = r;
  const minutes = (timeline.end - timeline.historyStart) / MINUTE_MS;
  const counts: MinuteCounts[] = new Array<MinuteCounts>(minutes);
  for (let m = 0; m < minutes; m++) counts[m] = countMinute(planMinute(model, timeline, seed, m));
  const at = (m: number | null): string | null => (m === null ? null : iso(timeline.historyStart + m * MINUTE_MS));
  return scenarioTruthSchema.parse({
    scenario: definition.name,
    site: r.host,
    description: definition.description,
    cause: definition.cause,
    expectedTopReason: definition.expectedTopReason,
    history: { from: iso(timeline.historyStart), to: iso(timeline.incidentStart) },
    incident: { from: iso(timeline.incidentStart), to: iso(timeline.end) },
    onset: onset === null ? null : iso(onset),
    hardBlocks50At: at(firstMajorityMinute(counts, hardBlocksOf)),
    refused50At: at(firstMajorityMinute(counts, refusalsOf)),
    expect: definition.expect,
  });
}

/** The truth and the events with the outcome each was generated to have (for tests of the classifier). */
export function generateLabelledScenario(name: string, options: ScenarioOptions): Scenario<LabelledEvent> {
  const r = resolve(name, options);
  const onset = onsetOf(r);
  const model = modelOf(r, onset);
  const truth = truthOf(r, model, onset);
  const idPrefix = `${r.definition.name}-${r.seed}`;
  return { truth, events: { [Symbol.iterator]: () => labelledTraffic(model, r.timeline, r.seed, idPrefix) } };
}

/** A scenario's truth and its events, as a crawler would send them. Throws ScenarioOptionsError. */
export function generateScenario(name: string, options: ScenarioOptions): Scenario<RequestOutcomeEventInput> {
  const labelled = generateLabelledScenario(name, options);
  return {
    truth: labelled.truth,
    events: {
      *[Symbol.iterator]() {
        for (const e of labelled.events) yield e.event;
      },
    },
  };
}
