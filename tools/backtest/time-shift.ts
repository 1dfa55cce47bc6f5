/**
 * Moving a scenario in time. The store takes events of the last 30 days only (core/signals/horizon.ts), and
 * the classifier's page norms are read relative to the wall clock (the last 14 days), so a scenario
 * directory written some days ago must be brought forward before it is ingested — and one written with
 * an `end` in the future brought back.
 *
 * Every scenario is shifted by a whole number of days so that its incident ends in the last day before
 * now: (now − 1 day, now]. A freshly written directory whose incident ended within the last day is not
 * moved (shift 0). Whole days keep the UTC time of day (diurnal patterns, minute and hour rollup
 * boundaries, the UTC days of the baseline) exactly as generated; the events and the truth move together,
 * so every figure of the scorecard (onset, lead times) is the same whichever day the backtest runs on.
 * Pure.
 */
import { fastParseEvent } from '@target-health/crawler/events/fast-parse';
import { parseEvent } from '@target-health/crawler/events/event';
import { EVENT_HORIZON } from '../../core/signals/horizon';
import type { ScenarioTruth } from '../../core/scenarios/truth';

export const DAY_MS = 86_400_000;

/** The whole days to add to a scenario's times so that its incident ends in (now − 1 day, now]. */
export function shiftDaysFor(truth: ScenarioTruth, now: number): number {
  return Math.floor((now - Date.parse(truth.incident.to)) / DAY_MS);
}

/**
 * Why a scenario cannot be ingested even when shifted (its history and incident span more days than
 * the store keeps), or undefined.
 */
export function spanProblem(truth: ScenarioTruth): string | undefined {
  const span = Date.parse(truth.incident.to) - Date.parse(truth.history.from);
  // Shifted, the incident ends up to a day before now: the history must start within the horizon then.
  const room = EVENT_HORIZON.maxAgeMs - DAY_MS;
  if (span > room)
    return (
      `history.from: the scenario spans ${(span / DAY_MS).toFixed(1)} days; the store takes events of the last ` +
      `${EVENT_HORIZON.maxAgeMs / DAY_MS} days, so at most ${room / DAY_MS} days fit — simulate fewer days`
    );
  return undefined;
}

const shiftIso = (value: string, ms: number): string => new Date(Date.parse(value) + ms).toISOString();
const shiftNullable = (value: string | null, ms: number): string | null =>
  value === null ? null : shiftIso(value, ms);

/** The truth with every time moved by `days` whole days. */
export function shiftTruth(truth: ScenarioTruth, days: number): ScenarioTruth {
  if (days === 0) return truth;
  const ms = days * DAY_MS;
  return {
    ...truth,
    history: { from: shiftIso(truth.history.from, ms), to: shiftIso(truth.history.to, ms) },
    incident: { from: shiftIso(truth.incident.from, ms), to: shiftIso(truth.incident.to, ms) },
    onset: shiftNullable(truth.onset, ms),
    hardBlocks50At: shiftNullable(truth.hardBlocks50At, ms),
    refused50At: shiftNullable(truth.refused50At, ms),
  };
}

/**
 * One NDJSON line with its event's `ts` moved by `ms`, or the line unchanged when it does not hold a
 * valid event (ingest then refuses it with its usual message). The time is read exactly as ingest reads
 * it (the product's event parser) and written back in the form it came in: epoch milliseconds stay a
 * number, an ISO time becomes an ISO time in UTC.
 */
export function shiftEventLine(line: string, ms: number): string {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return line;
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return line;
  const event =
    fastParseEvent(raw) ??
    (() => {
      const parsed = parseEvent(raw);
      return parsed.ok ? parsed.event : undefined;
    })();
  if (event === undefined) return line;
  const record = raw as Record<string, unknown>;
  const shifted = event.ts + ms;
  record.ts = typeof record.ts === 'number' ? shifted : new Date(shifted).toISOString();
  return JSON.stringify(record);
}
