/**
 * The pure core of `target-health score`: text in, text and exit code out, so it is tested without
 * processes. What-if scoring with exactly the reference algorithm (core/scoring/health-score.ts).
 *
 * Input: one JSON object, or NDJSON with one case per line:
 *   {"current": W, "baseline": W, "weights"?: {...}, "caps"?: {...}, "minRequests"?: n}
 *   W = {"requests", "hardBlocks", "challenges", "softBlocks", "p95LatencyMs"}
 * Cases are numbered by line (a single object, even pretty-printed over many lines, is case 1), so an
 * error's case number is where to look in the file. Valid cases are always printed; each invalid one
 * gets one line on stderr (`case 3: current.requests: expected a non-negative integer`) and the exit
 * code is 2 if any case was invalid.
 */
import { z } from 'zod';
import { formatIssues } from '@target-health/crawler/events/zod-issues';
import {
  DEFAULT_SCORING_CONFIG,
  HEALTH_SIGNALS,
  type HealthConfig,
  type HealthScoreResult,
  countSchema,
  healthCapsSchema,
  healthScore,
  healthWeightsSchema,
  hostilityWindowSchema,
} from '../../core/scoring';

export interface RunScoreOptions {
  json: boolean;
}

export interface RunScoreResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/** Exit code for input the user must fix. */
export const EXIT_INVALID_INPUT = 2;

export const scoreCaseSchema = z.strictObject(
  {
    current: hostilityWindowSchema(),
    baseline: hostilityWindowSchema(),
    weights: healthWeightsSchema().optional(),
    caps: healthCapsSchema().optional(),
    minRequests: countSchema().optional(),
  },
  { error: 'expected a JSON object like {"current": {...}, "baseline": {...}}' },
);
export type ScoreCase = z.output<typeof scoreCaseSchema>;

export interface ScoredCase {
  case: number;
  result: HealthScoreResult;
}

interface RawCase {
  number: number;
  text: string;
}

/** One JSON document (case 1) if the whole text parses, otherwise one case per non-blank line. */
function splitCases(input: string): RawCase[] {
  const trimmed = input.trim();
  if (trimmed === '') return [];
  try {
    JSON.parse(trimmed);
    return [{ number: 1, text: trimmed }];
  } catch {
    return input
      .split(/\r?\n/)
      .map((text, i) => ({ number: i + 1, text }))
      .filter((c) => c.text.trim() !== '');
  }
}

function configFor(c: ScoreCase): HealthConfig {
  const d = DEFAULT_SCORING_CONFIG.health;
  return { minRequests: c.minRequests ?? d.minRequests, weights: c.weights ?? d.weights, caps: c.caps ?? d.caps };
}

/** Parses and scores one case; returns the error line instead when it is invalid. */
export function scoreCase(raw: RawCase): ScoredCase | string {
  let value: unknown;
  try {
    value = JSON.parse(raw.text);
  } catch (err) {
    return `case ${raw.number}: invalid JSON (${err instanceof Error ? err.message : String(err)})`;
  }
  const parsed = scoreCaseSchema.safeParse(value);
  if (!parsed.success) return `case ${raw.number}: ${formatIssues(parsed.error)}`;
  const c = parsed.data;
  return { case: raw.number, result: healthScore(c.current, c.baseline, configFor(c)) };
}

/** Plain padded columns: case, score, penalty per signal (points lost), reasons. */
export function formatTable(cases: readonly ScoredCase[]): string {
  const header = ['case', 'score', ...HEALTH_SIGNALS, 'reasons'];
  const rows = cases.map(({ case: n, result }) => [
    String(n),
    result.score === null ? '-' : String(result.score),
    ...HEALTH_SIGNALS.map((k) => result.explanation.signals[k].penalty.toFixed(2)),
    result.reasons.length === 0 ? '-' : result.reasons.join(', '),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const last = header.length - 1;
  // Numbers right-aligned so digits line up; the free-text reasons column last and unpadded.
  const line = (cells: string[]): string =>
    cells
      .map((cell, i) => (i === last ? cell : cell.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const note = '(signal columns: points lost to each signal; score = round-half-even(100 - sum))';
  return [line(header), ...rows.map(line), note].join('\n') + '\n';
}

export function runScore(inputText: string, opts: RunScoreOptions): RunScoreResult {
  const raws = splitCases(inputText);
  if (raws.length === 0) {
    return {
      stdout: '',
      stderr: 'no cases in input: expected one JSON object, or NDJSON with one case per line\n',
      exitCode: EXIT_INVALID_INPUT,
    };
  }
  const scored: ScoredCase[] = [];
  const errors: string[] = [];
  for (const raw of raws) {
    const outcome = scoreCase(raw);
    if (typeof outcome === 'string') errors.push(outcome);
    else scored.push(outcome);
  }
  let stdout = '';
  if (opts.json) {
    stdout = scored
      .map(
        (s) =>
          JSON.stringify({
            case: s.case,
            score: s.result.score,
            reasons: s.result.reasons,
            explanation: s.result.explanation,
          }) + '\n',
      )
      .join('');
  } else if (scored.length > 0) {
    stdout = formatTable(scored);
  }
  return { stdout, stderr: errors.map((e) => e + '\n').join(''), exitCode: errors.length > 0 ? EXIT_INVALID_INPUT : 0 };
}
