/**
 * deploy/prometheus-alerts.yml and deploy/grafana-dashboard.json name metrics the API exports: each
 * `th_…` series and each label they select on must be one the server's registry has (so a renamed
 * metric fails here, not silently in someone's Prometheus). The registry is the server's own: the
 * skeleton's counters and histogram plus the per-site gauges, filled from a snapshot with one site.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { createApiMetrics } from '../../server/api/metrics';
import { registerSiteGauges } from '../../server/api/site-metrics';
import type { SiteSnapshot } from '../../server/api/site-snapshot';

const root = join(__dirname, '..', '..');

/** Every series name the registry exposes (histograms as their _bucket/_sum/_count), with its label names. */
async function exportedSeries(): Promise<Map<string, Set<string>>> {
  const metrics = createApiMetrics();
  const snapshot: SiteSnapshot = {
    stored: new Map([
      [
        'shop.example.com',
        { band: 'resisting', score: 30, parserHealth: 90, lastAssessmentAgeSeconds: 12, tickIntervalSeconds: 60 },
      ],
    ]),
    loops: new Map([['shop.example.com', { band: 'resisting', smoothedScore: 35, awaitingHuman: true }]]),
  };
  registerSiteGauges(metrics.registry, () => Promise.resolve(snapshot));
  // One observation each, so their label names show in the samples.
  metrics.eventsIngested.inc({ result: 'inserted' });
  metrics.eventsRejected.inc({ field: 'ts' });
  metrics.requestSeconds.observe({ method: 'GET', route: '/metrics', status: '200' }, 0.01);
  metrics.inboxBatches.inc({ result: 'drained' });
  metrics.inboxEvents.inc({ result: 'rejected' });
  metrics.inboxWaitSeconds.observe(0.3);
  const series = new Map<string, Set<string>>();
  for (const m of await metrics.registry.getMetricsAsJSON()) {
    for (const v of m.values) {
      // Histogram samples carry their own suffixed name (metricName); the others the metric's.
      const name = (v as { metricName?: string }).metricName ?? m.name;
      const labels = series.get(name) ?? new Set<string>(['job', 'instance']);
      for (const l of Object.keys(v.labels)) labels.add(l);
      series.set(name, labels);
    }
  }
  return series;
}

/** Every PromQL expression in a parsed document: the values of `expr` keys, at any depth. */
function expressions(doc: unknown): string[] {
  if (Array.isArray(doc)) return doc.flatMap(expressions);
  if (doc !== null && typeof doc === 'object') {
    return Object.entries(doc).flatMap(([k, v]) => (k === 'expr' && typeof v === 'string' ? [v] : expressions(v)));
  }
  return [];
}

/** The `th_…` series an expression names, each with the labels its `{…}` selects on. */
function usedSeries(expr: string): Array<{ name: string; labels: string[] }> {
  return [...expr.matchAll(/\b(th_[a-zA-Z0-9_]+)(\{([^}]*)\})?/g)].map((m) => ({
    name: m[1]!,
    labels: [...(m[3] ?? '').matchAll(/([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)/g)].map((l) => l[1]!),
  }));
}

const alerts = parse(readFileSync(join(root, 'deploy', 'prometheus-alerts.yml'), 'utf8')) as {
  groups: Array<{
    name: string;
    rules: Array<{ alert: string; expr: string; for?: string; annotations?: { summary?: string } }>;
  }>;
};
const dashboard = JSON.parse(readFileSync(join(root, 'deploy', 'grafana-dashboard.json'), 'utf8')) as {
  title: string;
  panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
  templating: unknown;
};

test.each([
  ['deploy/prometheus-alerts.yml', () => expressions(alerts)],
  [
    'deploy/grafana-dashboard.json',
    () => [
      ...expressions(dashboard.panels),
      ...expressions(dashboard.templating),
      ...JSON.stringify(dashboard.templating).match(/label_values\([^)]*\)/g)!,
    ],
  ],
])('%s uses only metrics and labels the API exports', async (_file, exprs) => {
  const exported = await exportedSeries();
  const used = exprs().flatMap(usedSeries);
  // A file that names nothing proves nothing.
  expect(used.length).toBeGreaterThan(5);
  const unknown = used.filter((u) => !exported.has(u.name)).map((u) => u.name);
  expect(unknown).toEqual([]);
  const badLabels = used.flatMap((u) =>
    u.labels.filter((l) => !exported.get(u.name)!.has(l)).map((l) => `${u.name}{${l}}`),
  );
  expect(badLabels).toEqual([]);
});

test('the check itself catches a metric the API does not export, and a wrong label', async () => {
  const exported = await exportedSeries();
  const [renamed, wrongLabel] = [
    usedSeries('rate(th_events_refused_total[5m])')[0]!,
    usedSeries('th_site_band{state="resisting"}')[0]!,
  ];
  expect(exported.has(renamed.name)).toBe(false);
  expect(exported.get(wrongLabel.name)!.has('state')).toBe(false);
});

test('the alert rules: the four operations alerts, each with an expression, a duration and a summary', () => {
  const rules = alerts.groups.flatMap((g) => g.rules);
  expect(rules.map((r) => r.alert)).toEqual(
    expect.arrayContaining([
      'TargetHealthSiteAwaitingHuman',
      'TargetHealthLoopStalled',
      'TargetHealthIngestRejectionsSpiking',
      'TargetHealthApi5xx',
    ]),
  );
  for (const r of rules) {
    expect(r.expr.trim()).not.toBe('');
    expect(r.for).toMatch(/^\d+[smh]$/);
    expect(r.annotations?.summary).toBeDefined();
  }
  const byName = new Map(rules.map((r) => [r.alert, r]));
  expect(byName.get('TargetHealthSiteAwaitingHuman')!.for).toBe('15m');
  expect(byName.get('TargetHealthLoopStalled')!.expr).toMatch(
    /th_site_last_assessment_age_seconds > 5 \* th_site_tick_interval_seconds/,
  );
});

test('the dashboard has the panels operators look at, each with a query', () => {
  const titles = dashboard.panels.map((p) => p.title);
  expect(titles).toEqual(
    expect.arrayContaining([
      'Sites per band',
      'Waiting for a person',
      'Smoothed score per site',
      'Events ingested',
      'Lines rejected by field',
      'API latency p99 by route',
    ]),
  );
  for (const p of dashboard.panels) expect(p.targets.length).toBeGreaterThan(0);
  expect(dashboard.panels.find((p) => p.title === 'API latency p99 by route')!.targets[0]!.expr).toMatch(
    /histogram_quantile\(0\.99, .*th_api_request_duration_seconds_bucket/,
  );
});
