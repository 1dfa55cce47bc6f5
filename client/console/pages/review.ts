/**
 * The Review page (docs/console.md): the incident review `target-health review` writes, as a page — the same
 * document (client/review/schema.ts, built by client/review/build.ts) and the same wording
 * (client/review/render.ts), with the chart inline. Pure: every value escaped by `markup`; the chart is the SVG
 * tools/charts drew (Vega escapes the text it holds), inserted as markup.
 */
import { formatCrawlerCanaries } from '../../../core/canaries/latest';
import { alertLine } from '../../../core/control/alerts';
import { formatDuration } from '../../../core/common/durations';
import { plural } from '../../../core/common/plural';
import { ago } from '../../../server/fleet/fleet';
import { sourceLine } from '../../loop-record/source';
import { ACTION_SPAN_MS } from '../../review/actions';
import { PEAK_SHARE, PEAK_WINDOW_MS } from '../../review/refusals';
import {
  candidateVerdict,
  earlyLine,
  FIGURES_HEADER,
  figuresRows,
  QUIET_HEADER,
  quietDayText,
  quietRows,
} from '../../review/render';
import {
  ACTION_HEADER,
  actionRows,
  ALERT_HEADER,
  alertRows,
  DECISION_HEADER,
  decisionRows,
  MILESTONE_HEADER,
  milestoneRows,
  TIMELINE_HEADER,
  timelineRows,
} from '../../review/rows';
import { leadText, percent, spanText, when } from '../../review/words';
import type { Review, Tuning } from '../../review/schema';
import { markup, type SafeHtml, trustedHtml } from '../html';
import { page, signedIn } from '../layout';

/** The review without its chart and tuning, which the page shows its own way. */
export type ReviewFacts = Omit<Review, 'chart' | 'tuning'>;

export interface ReviewView {
  review: ReviewFacts;
  /** What to tune, or null when not asked for (`tune`): its replays are the slow part of a review. */
  tuning: Tuning | null;
  /** The chart as SVG (tools/charts) and what it covers; no SVG: why not. */
  chart: { svg: string | null; note: string };
  /** The incident time asked for in the URL, or null: the latest incident. */
  asked: string | null;
  /** The quiet days replayed for false alarms (the `quiet-days` parameter). */
  quietDays: number;
  who: string;
  csrfToken: string;
  now: Date;
}

/** The console's path of a site's page (`/console/sites/<site>`): a site name is a host name, encoded anyway. */
export const sitePath = (site: string): string => `/console/sites/${encodeURIComponent(site)}`;

/** A moment: UTC inside `<time datetime>`, with how long ago. */
function at(iso: string | null, now: Date): SafeHtml {
  if (iso === null) return markup`—`;
  return markup`<time datetime="${iso}">${when(iso)}</time> <span class="why">(${ago(iso, now)})</span>`;
}

function table(caption: string, header: readonly string[], rows: readonly (readonly (string | SafeHtml)[])[]) {
  const head = header.map((h) => markup`<th scope="col">${h}</th>`);
  return markup`<div class="frame"><table class="review"><caption class="why">${caption}</caption>
<thead><tr>${head}</tr></thead><tbody>${rows.map(
    (r) => markup`<tr>${r.map((c, i) => markup`<td data-label="${header[i]}">${c === '' ? '—' : c}</td>`)}</tr>`,
  )}</tbody></table></div>`;
}

function summary(r: ReviewFacts, now: Date): SafeHtml {
  const w = r.window;
  const peak = r.refusals.peak;
  const openStart = w.openStart ? ' (already away from healthy at the start of the search: it began earlier)' : '';
  const openEnd = w.openEnd ? ' (not back to healthy by the end of the search)' : '';
  const item = (term: string, value: string | SafeHtml) => markup`<dt>${term}</dt><dd>${value}</dd>`;
  return markup`<section aria-labelledby="summary"><h2 id="summary">Summary</h2><dl class="facts">
${item('Window', markup`${at(w.from, now)} → ${at(w.to, now)}${openStart}${openEnd}`)}
${item('Duration', formatDuration(w.durationMs))}
${item('Worst band', markup`<span class="band-${r.worstBand}">${r.worstBand}</span>`)}
${r.source.kind === 'stored' ? null : item('Ticks', sourceLine(r.source) ?? '')}
${item(`Ticks ${r.source.kind === 'stored' ? 'stored' : 'replayed'}`, String(r.ticks))}
${item(
  'Peak refusal rate',
  peak === null
    ? `— (no ${formatDuration(PEAK_WINDOW_MS)} span with enough traffic)`
    : markup`${percent(peak.rate)} over ${formatDuration(PEAK_WINDOW_MS)} at ${at(peak.at, now)}; refusals
peaked (first reached ${Math.round(PEAK_SHARE * 100)} % of it) at ${at(peak.reachedAt, now)}`,
)}
${item('Refusals over the window', `${spanText(r.refusals.during)} (${r.refusals.level} rollups, all routes)`)}
${item(
  'From the onset',
  earlyLine(r, (s) => s.toUpperCase()),
)}
${item(
  'Lead time to the peak',
  r.lead === null
    ? '— (no warning band change or no refusal peak in the window)'
    : markup`first warning at ${at(r.lead.firstWarningAt, now)}, <strong>${leadText(r.lead.ms)}</strong>`,
)}
${item(
  "Alerts beside the band's reasons",
  r.alerts.length === 0 ? 'none (no route or parser alert)' : r.alerts.map(alertLine).join('; '),
)}
</dl></section>`;
}

function timeline(r: ReviewFacts, now: Date): SafeHtml {
  const time = (iso: string) => at(iso, now);
  return markup`<section aria-labelledby="timeline"><h2 id="timeline">Timeline of band changes</h2>${
    r.timeline.length === 0
      ? markup`<p>No band change inside the window (the band was already away from healthy when the search began).</p>`
      : table('Every change of the band in the window', TIMELINE_HEADER, timelineRows(r, time))
  }${
    r.alerts.length === 0
      ? markup`<p>No route or parser alert during the incident: the band's reasons are the whole explanation.</p>`
      : table(
          "Alerts beside the band's reasons (a route alert's traffic is left out of the score; a parser alert " +
            "is the parser owner's)",
          ALERT_HEADER,
          alertRows(r, time),
        )
  }</section>`;
}

function lead(r: ReviewFacts, now: Date): SafeHtml {
  const e = r.early;
  const half = e.refusedHalfAt === null ? 'never' : markup`at ${at(e.refusedHalfAt, now)}`;
  const onset =
    e.onset === null
      ? 'The traffic never left its normal near the first warning: there is no onset to measure from.'
      : markup`<strong>Onset:</strong> ${at(e.onset.at, now)}, the first minute ${e.onset.signal} left the site's
normal. Refusals passed half ${half}.`;
  const peak =
    r.lead === null
      ? markup`<p>${
          r.refusals.peak === null
            ? 'Refusals never had enough traffic to measure a peak in the window.'
            : 'No change into degrading or resisting inside the window: nothing to measure the lead from.'
        }</p>`
      : markup`<p>Against the peak: the first warning came at ${at(r.lead.firstWarningAt, now)}; refusals peaked at
${at(r.lead.peakReachedAt, now)} — the warning came <strong>${leadText(r.lead.ms)}</strong>. "Peaked" is the first
minute the ${formatDuration(PEAK_WINDOW_MS)} refusal rate reached ${Math.round(PEAK_SHARE * 100)} % of its highest
value in the window (${percent(r.refusals.peak?.rate ?? null)}).</p>`;
  return markup`<section aria-labelledby="lead"><h2 id="lead">Lead time</h2>
<p>${onset}</p>
${table(
  'The incident from its onset',
  MILESTONE_HEADER,
  milestoneRows(r, (iso) => at(iso, now)),
)}${peak}</section>`;
}

function actions(r: ReviewFacts, now: Date): SafeHtml {
  return markup`<section aria-labelledby="actions"><h2 id="actions">Actions taken and their effect</h2>${
    r.actions.length === 0
      ? markup`<p>No control change inside the window.</p>`
      : markup`<p class="why">Consecutive changes by the same actor into the same band are one action; refusals and
requests per minute over the ${formatDuration(ACTION_SPAN_MS)} before its first change and after its last.</p>${table(
          'Actions',
          ACTION_HEADER,
          actionRows(r, (iso) => at(iso, now)),
        )}`
  }</section>`;
}

function decisions(r: ReviewFacts, now: Date): SafeHtml {
  return markup`<section aria-labelledby="decisions"><h2 id="decisions">Who decided what and when</h2>${
    r.decisions.length === 0
      ? markup`<p>No person decided during the incident: every change was the loop's.</p>`
      : table(
          'Decisions',
          DECISION_HEADER,
          decisionRows(r, (iso) => at(iso, now)),
        )
  }</section>`;
}

function canaries(r: ReviewFacts): SafeHtml {
  const p = r.canaries.product;
  const runs = p.pass + p.mismatch + p.blocked + p.error;
  const c = r.canaries.crawler;
  return markup`<section aria-labelledby="canaries"><h2 id="canaries">Canaries</h2><p>${
    runs === 0
      ? "No canary of the product's ran during the incident."
      : `The product's canaries ran ${plural(runs, 'time')}: ${p.pass} pass, ${p.mismatch} mismatch, ` +
        `${p.blocked} blocked, ${p.error} error.`
  } ${
    c.requests === 0
      ? 'The crawler sent no canary requests during the incident.'
      : `During the incident, ${formatCrawlerCanaries(c)}.`
  }</p></section>`;
}

function chart(v: ReviewView): SafeHtml {
  return markup`<section aria-labelledby="chart"><h2 id="chart">Chart</h2>${
    v.chart.svg === null
      ? markup`<p>${v.chart.note}</p>`
      : markup`<figure class="chart review-chart" role="group"
aria-label="${v.review.site}: score, errors, refusals and actions around the incident">${trustedHtml(
          v.chart.svg,
        )}<figcaption class="why">${v.chart.note}</figcaption></figure>`
  }</section>`;
}

/** This review's page with other parameters: always at the incident's time, so the link shows this incident. */
const reviewHref = (r: ReviewFacts, extra: Record<string, string>): string =>
  `${sitePath(r.site)}/review?${new URLSearchParams({ incident: r.incidentAt, ...extra }).toString()}`;

function tuning(v: ReviewView): SafeHtml {
  const t = v.tuning;
  if (t === null)
    return markup`<section aria-labelledby="tune"><h2 id="tune">What to tune</h2>
<p>Not replayed yet: this page shows what to tune only when asked, since it replays the incident under the current
settings and two candidates (half a minute or more). <a href="${reviewHref(v.review, { tune: '1' })}">Replay the
incident: what to tune</a>.</p></section>`;
  const q = t.quietDays;
  const more = reviewHref(v.review, { tune: '1', 'quiet-days': '3' });
  const shortfall = q.shortfall === null ? '' : ` (${q.shortfall})`;
  const quiet =
    q.days.length === 0 || q.current === null
      ? markup`<p><strong>Quiet days:</strong> none replayed (${q.shortfall ?? 'none found'}), so no false alarms
were counted${
          v.quietDays === 0
            ? markup` — this page replays none unless asked, to stay quick:
<a href="${more}">replay 3 quiet days</a> (slower: a day of ticks per setting each)`
            : null
        }.</p>`
      : markup`<p><strong>Quiet days:</strong> ${q.days.map(quietDayText).join(', ')}${shortfall}.</p>${table(
          'False alarms over the quiet days',
          QUIET_HEADER,
          quietRows(t, q.current),
        )}`;
  return markup`<section aria-labelledby="tune"><h2 id="tune">What to tune</h2>
<p class="headline"><strong>${t.headline.text}</strong></p>
<p class="why">The incident replayed from ${when(t.from)} to ${when(t.to)} at ${formatDuration(t.tickMs)} ticks with
the people's decisions, once with ${t.settingsFrom} and once per candidate.</p>${table(
    'Each setting over the incident',
    FIGURES_HEADER,
    figuresRows(t),
  )}<ul>${t.candidates.map(
    (c) => markup`<li><strong>${c.name}</strong> — ${c.description}: ${candidateVerdict(c)}.</li>`,
  )}</ul>
${quiet}</section>`;
}

/** The CLI command that prints the same review (without the chart file). */
export function reviewCommand(r: ReviewFacts, quietDays: number): string {
  return `target-health review ${r.site} --incident ${r.incidentAt} --quiet-days ${quietDays}`;
}

export function reviewPage(v: ReviewView): string {
  const r = v.review;
  return page(
    `Review · ${r.site}`,
    markup`<nav class="crumbs" aria-label="Where"><a href="/console/fleet">Fleet</a> ›
<a href="${sitePath(r.site)}">${r.site}</a> › Review</nav>
<h2 class="title">Incident review: ${r.site}, ${when(r.window.from)} → ${when(r.window.to)}</h2>
<p>${v.asked === null ? 'The latest incident' : markup`The incident around ${at(r.incidentAt, v.now)}`}; the same review
as <code>${reviewCommand(r, v.quietDays)}</code>.</p>
${summary(r, v.now)}${timeline(r, v.now)}${lead(r, v.now)}${actions(r, v.now)}${decisions(r, v.now)}
${canaries(r)}${chart(v)}${tuning(v)}`,
    signedIn(v.who, v.csrfToken),
  );
}

/** No review to show (no incident, a bad parameter, an unknown site): what and how to fix it, with a way back. */
export function reviewProblemPage(o: { site: string | null; problem: string; who: string; csrfToken: string }): string {
  return page(
    'Review',
    markup`<nav class="crumbs" aria-label="Where"><a href="/console/fleet">Fleet</a>${
      o.site === null ? null : markup` › <a href="${sitePath(o.site)}">${o.site}</a>`
    } › Review</nav><p class="error" role="alert">${o.problem}</p>`,
    signedIn(o.who, o.csrfToken),
  );
}
