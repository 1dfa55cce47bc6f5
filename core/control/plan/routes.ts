/**
 * The routes' part of a tick: a route problem is reported, and kept out of the site's score
 * (core/scoring/route-diagnosis.ts).
 */
import { scoreLine } from '../notices';
import type { LoopConfig, TickDraft } from './types';

export function planRouteAlert(d: TickDraft, config: LoopConfig): void {
  if (!config.policy.routeAlerts) return;
  const routes = d.t.assessment.routes;
  const site = config.site;
  // A route confirmed while another one's alert is still standing is news too.
  const newRoute = (routes.newlyConfirmed?.length ?? 0) > 0;
  if (routes.verdict === 'route-specific' && (!d.prev.alerts.route || newRoute)) {
    d.state.alerts = { ...d.state.alerts, route: true };
    d.notices.push((e) => ({
      kind: 'route_alert',
      severity: 'warning',
      audience: 'owner',
      title: `${site}: route problem — ${routes.summary}`,
      text:
        `Failures concentrate in some routes; that traffic is left out of the site's score (${scoreLine(e)}, ` +
        `band ${e.band}). Check the proxy routes, not the site.`,
      evidence: e,
    }));
    d.actions.push('route alert');
  } else if (routes.verdict === 'site-wide' && d.prev.alerts.route) {
    d.state.alerts = { ...d.state.alerts, route: false };
  }
}
