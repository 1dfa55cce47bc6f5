/**
 * The Site page, pure (docs/console.md, "Site"): "now, explained" — each signal against its normal with their
 * intervals, the reasons, the band and what put it there, the smoothed score —, routes and alerts, what the site
 * actually served (refusals by vendor and marker, recent examples), canaries, what the loop does next, the chart
 * of the last day or two weeks (inline SVG), recent ticks, and the settings in force with their changes. Every
 * text is the CLI's (`status`, `explain`, `history`: client/on-call/), put into HTML; every value escaped.
 */
import { formatCrawlerCanaries } from '../../../core/canaries/latest';
import { type BandCause, bandAction, bandLabel } from '../../../core/control/band-wording';
import { alertLine, alertRow } from '../../../core/control/alerts';
import { formatDuration } from '../../../core/common/durations';
import { ago } from '../../../server/fleet/fleet';
import { effectCell, formatTickContext, scoreSentence, type SignalRow, valueCell } from '../../on-call/explain';
import { type ServedGroup, type ServedSummary, shareText } from '../../on-call/served';
import { controlsText, recentTickCause } from '../../on-call/status-text';
import { markup, type SafeHtml, trustedHtml } from '../html';
import { page, signedIn } from '../layout';
import { CHART_RANGES, type ChartRange, sitePath } from '../paths';
import type { SitePageData } from '../site-read';

export interface SiteView {
  data: SitePageData;
  who: string;
  csrfToken: string;
}

const dash = (v: number | null | undefined): string => (v === null || v === undefined ? '—' : String(v));

/** A time as people read it — `2026-12-07 10:02 UTC, 12m ago` — inside a machine-readable `<time>`. */
export function when(iso: string, now: Date): SafeHtml {
  return markup`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC, ${ago(iso, now)}</time>`;
}

/** What put the loop in its band, in words. */
export function causeText(band: string, cause: BandCause): string {
  switch (cause.kind) {
    case 'rule':
      return bandAction('resisting', cause) ?? cause.rule;
    case 'score':
      return 'the smoothed score, through the band thresholds';
    case 'person':
      return "a person's decision";
    case 'none':
      return band === 'learning' ? 'no score yet: the site is being learned' : '—';
  }
}

/** A section of the page, labelled by its heading (its id: the link target, e.g. `#chart`). */
function section(id: string, title: string, body: SafeHtml | readonly SafeHtml[]): SafeHtml {
  return markup`<section aria-labelledby="${id}"><h2 id="${id}">${title}</h2>${body}</section>`;
}

function summary(d: SitePageData): SafeHtml {
  const { state, explained: e } = d.status;
  const w = state.awaitingHuman;
  const by = w?.kind === 'manual' ? 'paused by hand' : 'paused by the loop';
  const waiting =
    w === null ? markup`no` : markup`<strong>yes</strong>, since ${when(w.since, d.now)} (${by}: ${w.reason})`;
  const scoreAlone = state.scoredBand !== state.band ? markup` — the score alone says ${state.scoredBand}` : null;
  const band = markup`<strong class="band-${state.band}">${bandLabel(state.band, e.bandCause)}</strong>${scoreAlone}`;
  return markup`<dl class="facts">
<dt>Band</dt><dd>${band}</dd>
<dt>Put there by</dt><dd>${causeText(state.band, e.bandCause)}</dd>
<dt>Score / smoothed</dt><dd class="num">${dash(state.score)} / ${dash(state.smoothedScore)}</dd>
<dt>Parser health</dt><dd class="num">${dash(state.parserHealth)}</dd>
<dt>Reasons</dt><dd>${state.reasons.length > 0 ? state.reasons.join(', ') : '—'}</dd>
<dt>Controls</dt><dd>${controlsText(state.controls)}</dd>
<dt>Waiting for a person</dt><dd>${waiting}</dd>
</dl>`;
}

function links(d: SitePageData): SafeHtml {
  const { state } = d.status;
  const waits = state.awaitingHuman !== null;
  // Deciding is for a site that waits for a person or still runs; a stopped loop has nothing to decide.
  const decide =
    waits || state.band !== 'stopped'
      ? markup`<a class="action" href="${sitePath(d.site, '/decide')}">Decide${waits ? ' (waiting for you)' : ''}</a>`
      : null;
  return markup`<nav class="links" aria-label="Site actions"><a href="/console/fleet">← Fleet</a>${decide}
<a href="${sitePath(d.site, '/review')}">Review the latest incident</a></nav>`;
}

function signalTable(caption: string, rows: readonly SignalRow[]): SafeHtml {
  if (rows.length === 0) return markup`<p>${caption}: — (no normal to compare with yet)</p>`;
  const body = rows.map(
    (s) => markup`<tr${s.reason ? trustedHtml(' class="reason"') : null}><th scope="row">${s.signal}</th>
<td class="num" data-label="Now (95% interval) count">${valueCell(s, 'now')}</td>
<td class="num" data-label="Normal (95% interval)">${valueCell(s, 'normal')}</td>
<td data-label="Effect">${effectCell(s)}</td></tr>`,
  );
  return markup`<div class="frame"><table class="compact"><caption>${caption}</caption><thead><tr>
<th scope="col">Signal</th><th scope="col">Now (95% interval) count</th><th scope="col">Normal (95% interval)</th>
<th scope="col">Effect</th></tr></thead><tbody>${body}</tbody></table></div>`;
}

function signals(d: SitePageData): SafeHtml {
  const e = d.status.explained;
  const latest = e.latest;
  if (latest === null || e.tick === null) return section('now', 'Now, explained', markup`<p>${e.unexplained}</p>`);
  const w = latest.window;
  const of = (score: SignalRow['score']): SignalRow[] => latest.signals.filter((s) => s.score === score);
  const context = new Map(formatTickContext(latest));
  const health =
    w.requests.current === 0 && latest.signals.length > 0
      ? markup`<p>Signals: — (no traffic in the window)</p>`
      : signalTable("Health signals, now vs the site's normal", of('health'));
  return section(
    'now',
    'Now, explained',
    markup`<p>Tick ${e.tick.tick}, assessed ${when(e.tick.assessedAt, d.now)}; current window
${when(w.currentFrom, d.now)} to ${when(w.currentTo, d.now)}: ${w.requests.current} requests
(needs ${dash(w.minRequests)}); normal: ${w.requests.baseline} requests.</p>
<p><strong>Score</strong> ${scoreSentence(latest)}; smoothed ${dash(d.status.state.smoothedScore)}.</p>
${health}<p><strong>Refusal rules</strong>: ${context.get('rules') ?? '—'}</p>
<h3>Parser health</h3><p>${context.get('parser') ?? '—'}</p>
${signalTable('Parser signals, now vs normal', of('parser'))}
<p><strong>Cost</strong>: ${context.get('cost') ?? '—'}</p>`,
  );
}

function routes(d: SitePageData): SafeHtml {
  const latest = d.status.explained.latest;
  const { routeDiagnosis, alerts: open } = d.status.state;
  const text = latest === null ? (routeDiagnosis?.summary ?? '—') : new Map(formatTickContext(latest)).get('routes');
  const openAlerts = [
    open.route ? 'a route alert is open' : null,
    open.parser ? 'a parser alert is open' : null,
  ].filter((x): x is string => x !== null);
  const openLine = openAlerts.length === 0 ? null : markup`<p class="error">${openAlerts.join('; ')}.</p>`;
  const raised = d.alerts.map(
    (x) => markup`<li>${when(x.at.toISOString(), d.now)}: ${alertLine(alertRow(x, d.site))}</li>`,
  );
  const list =
    raised.length === 0 ? markup`<p>No route or parser alert in the last day.</p>` : markup`<ul>${raised}</ul>`;
  return section(
    'routes',
    "Routes: site-wide, or a route's problem",
    markup`<p>${text}</p>
${openLine}<h3>Alerts, last 24 h</h3>${list}`,
  );
}

function servedGroup(g: ServedGroup, now: Date): SafeHtml {
  const marker =
    g.markerId === null || g.what.includes(g.markerId)
      ? null
      : markup` <span class="why">(marker <code>${g.markerId}</code>)</span>`;
  return markup`<li><strong>${shareText(g.share)}</strong> ${g.what}${marker} ${g.where} since ${when(g.since, now)}
— ${g.count} requests, the last ${when(g.last, now)}</li>`;
}

function servedExample(x: ServedSummary['examples'][number], now: Date): SafeHtml {
  const marker = x.markerId === null ? null : markup` <code>${x.markerId}</code>`;
  return markup`<tr><td data-label="Time">${when(x.at.toISOString(), now)}</td>
<td data-label="Route"><code>${x.route}</code></td><td class="num" data-label="Status">${dash(x.status)}</td>
<td data-label="Title">${x.title ?? '—'}</td><td data-label="What">${x.what}${marker}</td></tr>`;
}

function served(d: SitePageData): SafeHtml {
  const s = d.served;
  const span = formatDuration(Date.parse(s.to) - Date.parse(s.from));
  const head =
    s.requests === 0 && s.refused === 0
      ? markup`<p>No request in the last ${span}.</p>`
      : markup`<p>${s.requests} requests in the last ${span}, ${s.refused} refused (${shareText(s.share)}).</p>`;
  const groups =
    s.groups.length === 0
      ? markup`<p>Nothing refused.</p>`
      : markup`<ul class="served">${s.groups.map((g) => servedGroup(g, d.now))}</ul>`;
  const examples =
    s.examples.length === 0
      ? null
      : markup`<div class="frame"><table class="compact"><caption>The latest refused requests</caption><thead><tr>
<th scope="col">Time</th><th scope="col">Route (country|pool|session)</th><th scope="col">Status</th>
<th scope="col">Page title</th><th scope="col">What</th></tr></thead>
<tbody>${s.examples.map((x) => servedExample(x, d.now))}</tbody></table></div>`;
  return section('served', 'What the site actually served', [head, groups, examples ?? markup``]);
}

function canaries(d: SitePageData): SafeHtml {
  const c = d.status.explained.canaries;
  const latest = new Map(c.latest.map((r) => [r.canaryId, r]));
  const crawler =
    c.crawler !== null && c.crawler.requests > 0 ? markup`<p>${formatCrawlerCanaries(c.crawler, c.crawler)}</p>` : null;
  const paused = d.status.state.awaitingHuman !== null;
  const run = (id: string): SafeHtml => {
    const r = latest.get(id);
    if (r === undefined) return markup`<li><code>${id}</code>: not run yet</li>`;
    return markup`<li><code>${id}</code>: <strong>${r.result.toUpperCase()}</strong> ${when(r.ranAt, d.now)}:
${r.reason}</li>`;
  };
  const own =
    c.defined.length === 0
      ? markup`<p>No canary of its own is defined${
          paused ? ': while paused nothing but canaries shows whether the site calmed down' : ''
        }.</p>`
      : markup`<ul>${c.defined.map(run)}</ul>`;
  return section('canaries', 'Canaries', [own, crawler ?? markup``]);
}

function next(d: SitePageData): SafeHtml {
  const n = d.status.explained.next;
  const w = d.status.state.awaitingHuman;
  const due =
    n.nextTickAt === null
      ? markup`—`
      : markup`<time datetime="${n.nextTickAt}">${n.nextTickAt.slice(0, 19).replace('T', ' ')} UTC</time>`;
  const commands = n.commands.map((c) => markup`<li><code>${c}</code></li>`);
  return section(
    'next',
    'What the loop does next',
    markup`<p><strong>${n.plan}</strong></p><p>Why: ${n.why}</p>
<p>Next tick: ${due} (every ${formatDuration(d.status.state.tickIntervalMs)}).${
      w === null ? null : markup` Waiting for a person since ${when(w.since, d.now)}.`
    }</p>${commands.length === 0 ? null : markup`<p>From a terminal:</p><ul>${commands}</ul>`}`,
  );
}

const RANGE_WORDS: Record<ChartRange, string> = { '1d': 'last day', '14d': 'last two weeks' };

function chart(d: SitePageData): SafeHtml {
  const toggle = (Object.keys(CHART_RANGES) as ChartRange[]).map((r) =>
    r === d.range
      ? markup`<strong aria-current="true">${RANGE_WORDS[r]}</strong>`
      : markup`<a href="${sitePath(d.site)}?range=${r}#chart">${RANGE_WORDS[r]}</a>`,
  );
  const label =
    `score, band, traffic, refusals and latency of ${d.site} over the ${RANGE_WORDS[d.range]}, with decisions, ` +
    'alerts and control changes';
  // The SVG is Vega's rendering of tools/charts' spec: text escaped by Vega, no script, no style attribute
  // (the Content-Security-Policy allows neither), so it is inserted as it is.
  const body =
    'svg' in d.chart
      ? markup`<figure class="chart" role="img" aria-label="${label}">${trustedHtml(d.chart.svg)}</figure>`
      : markup`<p>No chart: ${d.chart.none}.</p>`;
  return section('chart', 'Chart', markup`<p class="toggle">${toggle[0]} · ${toggle[1]}</p>${body}`);
}

function tickRow(d: SitePageData, t: SitePageData['status']['history'][number]): SafeHtml {
  const { state, explained } = d.status;
  const reasons = t.reasons.join(', ') || (t.state === 'scored' ? '—' : `(${t.state})`);
  return markup`<tr><td data-label="Time">${when(t.assessedAt, d.now)}</td>
<td class="num" data-label="Tick">${t.tick}</td>
<td data-label="Band">${bandLabel(t.band, recentTickCause(t, state, explained.bandCause))}</td>
<td class="num" data-label="Score / smoothed">${dash(t.score)} / ${dash(t.smoothedScore)}</td>
<td class="num" data-label="Parser">${dash(t.parserHealth)}</td>
<td data-label="Reasons">${reasons}</td><td data-label="Actions">${t.actions.join('; ') || '—'}</td></tr>`;
}

function ticks(d: SitePageData): SafeHtml {
  const { history } = d.status;
  if (history.length === 0) return section('ticks', 'Recent ticks', markup`<p>None yet.</p>`);
  return section(
    'ticks',
    'Recent ticks',
    markup`<div class="frame"><table class="compact">
<caption>The latest ${history.length}, newest first</caption><thead><tr>
<th scope="col">Time</th><th scope="col">Tick</th>
<th scope="col">Band</th><th scope="col">Score / smoothed</th><th scope="col">Parser</th><th scope="col">Reasons</th>
<th scope="col">Actions</th></tr></thead>
<tbody>${[...history].reverse().map((t) => tickRow(d, t))}</tbody></table></div>`,
  );
}

const settingValue = (v: string | number | boolean | null): string => (v === null ? '—' : String(v));

function settings(d: SitePageData): SafeHtml {
  const fields =
    'fields' in d.settings
      ? d.settings.fields.map((f) => markup`<dt><code>${f.field}</code></dt><dd>${settingValue(f.value)}</dd>`)
      : [];
  const inForce =
    'fields' in d.settings
      ? markup`<details><summary>The settings in force (${fields.length} fields)</summary>
<dl class="settings">${fields}</dl></details>`
      : markup`<p>The settings in force are not available: ${d.settings.none}.</p>`;
  const change = (c: SitePageData['settingsChanges'][number]): SafeHtml => {
    const fieldChanges = c.changes.map(
      (x) => markup`<li><code>${x.field}</code> ${settingValue(x.old)} → ${settingValue(x.new)}</li>`,
    );
    return markup`<li>${when(c.changedAt.toISOString(), d.now)} by ${c.who}${c.why === null ? null : markup`: ${c.why}`}
<ul>${fieldChanges}</ul></li>`;
  };
  const changes =
    d.settingsChanges.length === 0
      ? markup`<p>Never changed since the loop started (<code>target-health configure</code> changes them).</p>`
      : markup`<ul>${d.settingsChanges.map(change)}</ul>`;
  return section('settings', 'Settings', markup`${inForce}<h3>Changes</h3>${changes}`);
}

export function sitePage(v: SiteView): string {
  const d = v.data;
  return page(
    d.site,
    markup`<div class="site"><section aria-label="Summary">${links(d)}${summary(d)}</section>${served(d)}${signals(d)}
${routes(d)}${canaries(d)}${next(d)}${chart(d)}${ticks(d)}${settings(d)}</div>`,
    signedIn(v.who, v.csrfToken),
  );
}

/** The 404 page of a site without a loop (or not known), with the way back. */
export function noSitePage(site: string, who: string, csrfToken: string): string {
  return page(
    'No such site',
    markup`<p class="error" role="alert">site: no health loop runs for ${site}. Check the name on the Fleet page,
or start one with <code>target-health start ${site}</code>.</p><p><a href="/console/fleet">← Back to the fleet</a></p>`,
    signedIn(who, csrfToken),
  );
}

/** The 400 page of a bad request (a site name that is not one, a bad query parameter): the field and the fix. */
export function badSiteRequestPage(problem: string, who: string, csrfToken: string): string {
  return page(
    'Bad request',
    markup`<p class="error" role="alert">${problem}</p><p><a href="/console/fleet">← Back to the fleet</a></p>`,
    signedIn(who, csrfToken),
  );
}
