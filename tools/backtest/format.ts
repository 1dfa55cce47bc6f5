/**
 * The scorecard for people (a terminal table) and for programs (one JSON document, `--json`). Pure.
 *
 * Times in the table are relative: `+4m` after onset, a lead `12m` before hard blocks passed half
 * (negative: after). `missed` marks what the truth expected and never came; `–` nothing, as expected.
 */
import type { BacktestResult } from './run';
import type { LoopScore, RuleScore, RuleSummary, ScenarioScore } from './scorecard';
import { REFERENCE_RULES, SLO_SUCCESS } from './reference-rules';
import { plural } from '../../core/common/plural';

/** `4m`, `1h05m`, `45s`; negative with a minus sign. */
export function formatDuration(ms: number): string {
  const sign = ms < 0 ? '−' : '';
  const abs = Math.abs(ms);
  if (abs < 60_000) return `${sign}${Math.round(abs / 1000)}s`;
  const minutes = Math.round(abs / 60_000);
  if (minutes < 60) return `${sign}${minutes}m`;
  return `${sign}${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

/** A time after onset: `+4m` (or `−2m` before it). */
const after = (ms: number): string => (ms >= 0 ? `+${formatDuration(ms)}` : formatDuration(ms));

function table(header: readonly string[], rows: readonly string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

function detection(expected: boolean, delayMs: number | null): string {
  if (delayMs !== null) return after(delayMs);
  return expected ? 'missed' : '–';
}

function falseCell(l: LoopScore): string {
  return l.falseDegrades === 0 && l.falsePauses === 0 ? '0' : `${l.falseDegrades}/${l.falsePauses}`;
}

function routeCell(s: ScenarioScore): string {
  const l = s.loop;
  const parts: string[] = [];
  if (l.routeAlertDelayMs !== null) parts.push(`${after(l.routeAlertDelayMs)} ${s.expect.routeAlert ?? ''}`.trim());
  else if (l.missedRouteAlert) parts.push('missed');
  if (l.spuriousRouteAlerts > 0) parts.push(`${l.spuriousRouteAlerts} spurious`);
  return parts.join(', ') || '–';
}

function parserCell(s: ScenarioScore): string {
  const l = s.loop;
  const parts: string[] = [];
  if (l.parserAlertDelayMs !== null) parts.push(after(l.parserAlertDelayMs));
  else if (l.missedParserAlert) parts.push('missed');
  if (l.falseParserAlerts > 0) parts.push(`${l.falseParserAlerts} false`);
  if (l.parserAlertsWhileThrottled > 0) parts.push(`${l.parserAlertsWhileThrottled} throttled`);
  return parts.join(', ') || '–';
}

function reasonCell(s: ScenarioScore): string {
  const top = s.loop.topReason ?? '–';
  if (s.loop.topReasonMatches === null) return top;
  return s.loop.topReasonMatches ? `${top} ✓` : `${top} ✗ (${s.expectedTopReason})`;
}

const lead = (ms: number | null): string => (ms === null ? '–' : formatDuration(ms));

function scenarioTable(scenarios: readonly ScenarioScore[]): string {
  const header = [
    'scenario',
    'cause',
    'degrade',
    'pause',
    'lead D',
    'lead P',
    'false D/P',
    'throttled',
    'route alerts',
    'parser alerts',
    'top reason',
    'no score',
  ];
  const rows = scenarios.map((s) => [
    s.scenario,
    s.cause,
    detection(s.expect.degrade, s.loop.degradeDelayMs),
    detection(s.expect.pause, s.loop.pauseDelayMs),
    lead(s.loop.degradeLeadMs),
    lead(s.loop.pauseLeadMs),
    falseCell(s.loop),
    String(s.loop.throttledTicks),
    routeCell(s),
    parserCell(s),
    reasonCell(s),
    String(s.loop.unscoredTicks),
  ]);
  return table(header, rows);
}

function ruleCell(r: RuleScore | undefined): string {
  if (!r) return '–';
  const hit = detection(r.expected, r.delayMs);
  return r.falseAlarms > 0 ? `${hit} (${r.falseAlarms} false)` : hit;
}

function rulesTable(scenarios: readonly ScenarioScore[]): string {
  const names = [...new Set(scenarios.flatMap((s) => s.rules.map((r) => r.rule)))];
  const header = ['scenario', 'loop (degrade)', ...names];
  const rows = scenarios.map((s) => {
    const loop = detection(s.onset !== null && (s.expect.degrade || s.expect.pause), s.loop.degradeDelayMs);
    return [
      s.scenario,
      s.loop.falseDegrades > 0 ? `${loop} (${s.loop.falseDegrades} false)` : loop,
      ...names.map((n) => ruleCell(s.rules.find((r) => r.rule === n))),
    ];
  });
  return table(header, rows);
}

function summaryTable(loop: RuleSummary, rules: readonly RuleSummary[]): string {
  const header = ['alert', 'detected', 'missed', 'false alarms', 'median delay', 'median lead'];
  const rows = [loop, ...rules].map((r) => [
    r.rule,
    `${r.detected}/${r.expected}`,
    String(r.missed),
    String(r.falseAlarms),
    r.medianDelayMs === null ? '–' : after(r.medianDelayMs),
    lead(r.medianLeadMs),
  ]);
  return table(header, rows);
}

export function formatScorecardText(result: BacktestResult): string {
  const { scorecard, timings } = result;
  const o = scorecard.overall;
  const shifted = timings.filter((t) => t.shiftDays !== 0);
  const out: string[] = [];
  out.push(
    `Backtest: ${o.scenarios} scenario${o.scenarios === 1 ? '' : 's'}, ticks every ` +
      `${formatDuration(result.tickMs)}, ${(result.totalMs / 1000).toFixed(1)} s`,
  );
  if (shifted.length > 0)
    out.push(
      `(times moved by whole days into the store's 30-day horizon: ` +
        `${shifted.map((t) => `${t.scenario} ${t.shiftDays > 0 ? '+' : ''}${t.shiftDays} d`).join(', ')})`,
    );
  out.push(
    '',
    'The loop (times after onset; lead = before hard blocks passed 50 %; false D/P = false degrades/pauses):',
    scenarioTable(scorecard.scenarios),
  );
  out.push(
    '',
    'Against the reference rules (first alert after onset; false = firings before onset or where none was due):',
    rulesTable(scorecard.scenarios),
  );
  out.push('', summaryTable(o.loopAsAlert, o.rules));
  out.push(
    '',
    `Overall: ${o.missedPauses} missed pauses, ${o.falsePauses} false pauses, ${o.falseDegrades} false degrades, ` +
      `${o.spuriousRouteAlerts} spurious route alerts, ${o.missedRouteAlerts} missed route alerts, ` +
      `${o.falseParserAlerts} false / ${o.missedParserAlerts} missed parser alerts; ` +
      `median lead ${lead(o.medianDegradeLeadMs)} (degrade), ${lead(o.medianPauseLeadMs)} (pause); ` +
      `median onset→pause ${o.medianPauseDelayMs === null ? '–' : formatDuration(o.medianPauseDelayMs)}; ` +
      `top reason right ${o.topReasonMatches}/${o.topReasonJudged}; ${plural(o.unscoredTicks, 'tick')} without a ` +
      `score.`,
  );
  out.push(
    '',
    'Reference rules:',
    ...REFERENCE_RULES.map((r) => `  ${r.name}: ${r.description}`),
    `  (success = not refused and not an error; SLO assumed ${SLO_SUCCESS * 100} %)`,
  );
  const kept = timings.filter((t) => t.database !== null);
  if (kept.length > 0)
    out.push(
      '',
      'Kept scratch databases (same server as DATABASE_URL):',
      ...kept.map((t) => `  ${t.scenario}: ${t.database}`),
    );
  return `${out.join('\n')}\n`;
}

/** The whole result as one JSON document: scorecard (per scenario and overall) and timings. */
export function formatScorecardJson(result: BacktestResult): string {
  const { tickMs, totalMs, scorecard, timings } = result;
  return `${JSON.stringify({ tickMs, totalMs, scorecard, timings })}\n`;
}
