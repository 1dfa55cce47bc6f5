/** The parser's part of a tick: parser health is the parser owner's business — an alert, never a throttle. */
import { PARSER_ALERT_HYSTERESIS } from '../controls';
import { describeSignals } from '../notices';
import type { LoopConfig, TickDraft } from './types';

export function planParserAlert(d: TickDraft, config: LoopConfig): void {
  const a = d.t.assessment;
  const parser = a.parser.score;
  if (parser === null) return;
  const { policy, site } = config;
  if (!d.prev.alerts.parser && parser < policy.parserAlertBelow) {
    d.state.alerts = { ...d.state.alerts, parser: true };
    const failing = a.parser.reasons.filter((r) => r.startsWith('extraction_')).join(', ') || 'see evidence';
    d.notices.push((e) => ({
      kind: 'parser_health',
      severity: 'warning',
      audience: 'parser_owner',
      title: `${site}: parser health ${parser} (below ${policy.parserAlertBelow})`,
      text: `Extraction fails more than usual: ${failing}. ${describeSignals(e.signals.filter((s) => s.signal.startsWith('extraction_')))}. The site is not throttled for this (health score ${a.health.score ?? 'absent'}).`,
      evidence: e,
    }));
    d.actions.push('notified parser owner');
  } else if (d.prev.alerts.parser && parser >= policy.parserAlertBelow + PARSER_ALERT_HYSTERESIS) {
    d.state.alerts = { ...d.state.alerts, parser: false };
  }
}
