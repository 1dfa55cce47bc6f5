/**
 * The parser's part of a tick: parser health is the parser owner's business — an alert, never a throttle.
 *
 * The alert needs persistence. Parser health must be below `policy.parserAlertBelow` on consecutive
 * scored ticks — at least two, spanning at least `policy.parserAlertAfterMs` (3 min by default) — so one
 * tick's dip (a burst of odd pages, a small sample) does not page anyone. Persistence is measured in
 * time, not ticks, so the tick interval does not change how soon it fires. A tick without a parser score
 * (too few extractions) neither extends nor breaks the run.
 */
import { PARSER_ALERT_HYSTERESIS } from '../controls';
import { describeSignals } from '../notices';
import type { LoopConfig, TickDraft } from './types';
import { plural } from '../../common/plural';

/** Parser health below its threshold: since when, on how many scored ticks (null when not below). */
function belowRun(d: TickDraft, parser: number, config: LoopConfig): { since: string; ticks: number } | null {
  if (parser >= config.policy.parserAlertBelow) return null;
  const prev = d.prev.parserBelow;
  return { since: prev?.since ?? d.t.assessedAt, ticks: (prev?.ticks ?? 0) + 1 };
}

/** Whether parser health has been low long enough to tell someone. */
function persisted(d: TickDraft, run: { since: string; ticks: number } | null, config: LoopConfig): boolean {
  if (run === null) return false;
  return run.ticks >= 2 && Date.parse(d.t.assessedAt) - Date.parse(run.since) >= config.policy.parserAlertAfterMs;
}

export function planParserAlert(d: TickDraft, config: LoopConfig): void {
  const a = d.t.assessment;
  const parser = a.parser.score;
  if (parser === null) return;
  const { policy, site } = config;
  const run = belowRun(d, parser, config);
  d.state.parserBelow = run;
  if (!d.prev.alerts.parser && persisted(d, run, config)) {
    d.state.alerts = { ...d.state.alerts, parser: true };
    const failing = a.parser.reasons.filter((r) => r.startsWith('extraction_')).join(', ') || 'see evidence';
    const since = run !== null ? ` since ${run.since} (${plural(run.ticks, 'tick')})` : '';
    d.notices.push((e) => ({
      kind: 'parser_health',
      severity: 'warning',
      audience: 'parser_owner',
      title: `${site}: parser health ${parser} (below ${policy.parserAlertBelow}${since})`,
      text:
        `Extraction fails more than usual: ${failing}. ` +
        `${describeSignals(e.signals.filter((s) => s.signal.startsWith('extraction_')))}. The site is not ` +
        `throttled for this (health score ${a.health.score ?? 'absent'}).`,
      evidence: e,
    }));
    d.actions.push('notified parser owner');
  } else if (d.prev.alerts.parser && parser >= policy.parserAlertBelow + PARSER_ALERT_HYSTERESIS) {
    d.state.alerts = { ...d.state.alerts, parser: false };
  }
}
