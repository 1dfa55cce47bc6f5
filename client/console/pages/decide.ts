/**
 * The Decide page and its two steps (docs/console.md, "Decide"), pure: the site's situation and a form per
 * decision the loop's gate allows now (resume — cautious or explicit —, pause, stop), the preview of one
 * (the controls now and after, the loop after it, the equivalent CLI command, a confirm form), the result
 * once the loop applied it (the decision, its audit entry, the controls the crawler now follows, the loop's
 * state), and the pages of a decision that changed nothing (refused, invalid, no loop).
 */
import type { Controls } from '../../../core/control/controls';
import { type DecisionKind, decisionNotAllowed } from '../../../core/control/decisions';
import type { SiteHealthState } from '../../../loop/messages';
import type { AuditRow, SiteControlsRecord } from '../../../server/db/controls';
import type { StoredDecision } from '../../../server/db/decisions';
import { ago } from '../../../server/fleet/fleet';
import { describeChange } from '../../../core/control/controls';
import type { DecisionPlan } from '../decide-plan';
import { markup, type SafeHtml, trustedHtml } from '../html';
import { page, signedIn } from '../layout';
import { sitePath } from '../paths';

export interface Signed {
  who: string;
  csrfToken: string;
  now: Date;
}

export const decidePath = (site: string): string => sitePath(site, '/decide');

function when(iso: string, now: Date): SafeHtml {
  return markup`<time datetime="${iso}">${iso.replace(/\.\d+Z$/, 'Z')}</time> (${ago(iso, now)})`;
}

const yesNo = (b: boolean): string => (b ? 'yes' : 'no');

/** The controls' rows: label and value. */
function controlRows(c: Controls): Array<[string, string]> {
  return [
    ['Concurrency', String(c.concurrencyLimit)],
    ['Revisit intervals', `×${c.revisitMultiplier}`],
    ['Effective cost', `×${c.effectiveCostMultiplier}`],
    ['Paused', yesNo(c.paused)],
    ['Canaries only', yesNo(c.canaryOnly)],
    ['Band', c.band],
  ];
}

function controlsList(c: Controls | null): SafeHtml {
  if (c === null) return markup`<p>No controls yet: the crawler runs at its own pace.</p>`;
  return markup`<dl class="facts">${controlRows(c).map(([k, v]) => markup`<dt>${k}</dt><dd>${v}</dd>`)}</dl>`;
}

const nav = (site: string): SafeHtml =>
  markup`<nav class="crumbs"><a href="/console/fleet">Fleet</a> › <a href="${sitePath(site)}">${site}</a>
› <a href="${decidePath(site)}">Decide</a></nav>`;

const hidden = (name: string, value: string | undefined): SafeHtml | null =>
  value === undefined ? null : markup`<input type="hidden" name="${name}" value="${value}">`;

/** The situation the person decides on: band, waiting since and why, controls, the last decision. */
function situation(s: SiteHealthState, now: Date): SafeHtml {
  const w = s.awaitingHuman;
  const d = s.lastDecision;
  const scores = `${s.score ?? '—'} / ${s.smoothedScore ?? '—'}`;
  return markup`<section class="panel" aria-labelledby="now-h"><h2 id="now-h">Now</h2><dl class="facts">
<dt>Band</dt><dd><span class="band-${s.band}">${s.band}</span></dd>
<dt>Score / smoothed</dt><dd>${scores}</dd>
<dt>Waiting for a person</dt><dd>${w === null ? 'no' : markup`since ${when(w.since, now)}: ${w.reason}`}</dd>
<dt>Last decision</dt><dd>${
    d === null ? '—' : markup`${d.kind} by ${d.who}, ${when(d.decidedAt, now)}: ${d.why}`
  }</dd>${
    s.pendingDecisions > 0
      ? markup`<dt>Queued</dt><dd>${s.pendingDecisions} decision(s), applied before the next tick</dd>`
      : null
  }</dl><h3>Controls the crawler follows</h3>${controlsList(s.controls)}</section>`;
}

export interface DecideView extends Signed {
  state: SiteHealthState;
  /** What a cautious resume would set now (decide-plan.ts: cautiousPreview). */
  cautious: Controls;
  /** The session's token may decide (scope decide or admin). */
  canDecide: boolean;
  scopes: readonly string[];
  /** A form sent back: what was wrong (one line naming the field) and what was typed. */
  error?: { message: string; typed: Partial<Record<string, string>> };
}

function whyField(kind: string, typed: string | undefined): SafeHtml {
  return markup`<label for="why-${kind}">Why you ${kind} (goes into the audit trail)</label>
<textarea id="why-${kind}" name="why" rows="2" required maxlength="2000">${typed ?? ''}</textarea>`;
}

function decisionForms(v: DecideView): SafeHtml {
  const s = v.state;
  const gate = { site: s.site, band: s.band, stopped: s.band === 'stopped', awaiting: s.awaitingHuman !== null };
  const typed = v.error?.typed ?? {};
  const typedFor = (kind: string): string | undefined => (typed.kind === kind ? typed.why : undefined);
  const checked = trustedHtml(' checked');
  const explicit = typed.kind === 'resume' && typed.mode === 'explicit';
  const open = (kind: DecisionKind, title: string, body: SafeHtml): SafeHtml => {
    const refusal = decisionNotAllowed(kind, gate);
    if (refusal !== null)
      return markup`<section class="panel decision"><h3>${title}</h3><p class="why">Not now: ${refusal}.</p></section>`;
    return markup`<section class="panel decision"><h3>${title}</h3><form method="post" action="${decidePath(
      s.site,
    )}/preview"><input type="hidden" name="csrf" value="${v.csrfToken}">
<input type="hidden" name="kind" value="${kind}">
${body}${whyField(kind, typedFor(kind))}<button type="submit">Preview ${kind}</button></form></section>`;
  };
  const c = v.cautious;
  const resume = open(
    'resume',
    'Resume',
    markup`<fieldset><legend>How to resume</legend>
<div><input type="radio" id="mode-cautious" name="mode" value="cautious"${explicit ? null : checked}>
<label for="mode-cautious">Cautious: concurrency ${c.concurrencyLimit}, revisit ×${c.revisitMultiplier}
(the degrading band's controls)</label></div>
<div><input type="radio" id="mode-explicit" name="mode" value="explicit"${explicit ? checked : null}>
<label for="mode-explicit">Explicit: the numbers below</label></div>
<div class="pair"><div><label for="concurrency">Concurrency (1–10000)</label>
<input id="concurrency" name="concurrency" inputmode="numeric" value="${typed.concurrency ?? ''}"></div>
<div><label for="revisitMultiplier">Revisit-interval multiplier (1–100)</label>
<input id="revisitMultiplier" name="revisitMultiplier" inputmode="decimal" value="${
      typed.revisitMultiplier ?? ''
    }"></div></div></fieldset>`,
  );
  const pause = open('pause', 'Pause', markup`<p>Canaries only, until someone resumes or stops the site.</p>`);
  const stop = open('stop', 'Stop', markup`<p>Ends the site's health loop; the controls say stopped.</p>`);
  return markup`${resume}${pause}${stop}`;
}

export function decidePage(v: DecideView): string {
  const s = v.state;
  const error =
    v.error === undefined ? null : markup`<p class="error" role="alert">Nothing was sent: ${v.error.message}</p>`;
  const forms = !v.canDecide
    ? markup`<section class="panel"><h2>Decide</h2><p>You are signed in as ${v.who} with the scope${
        v.scopes.length === 1 ? '' : 's'
      } ${v.scopes.join(', ')}: deciding needs a token with the scope <code>decide</code>. An admin gives you one with
<code>target-health token create &lt;your name&gt; --scope read,decide</code>;
then sign out and in again with it.</p></section>`
    : s.band === 'stopped'
      ? markup`<section class="panel"><h2>Decide</h2><p>The loop was stopped: nothing to decide. Start a new one with
<code>target-health start ${s.site}</code>.</p></section>`
      : markup`<h2>Decide</h2><p class="why">Each decision is previewed first: nothing is sent until you confirm. It is
audited under your name, ${v.who}.</p>${error}<div class="decisions">${decisionForms(v)}</div>`;
  const body = markup`${nav(s.site)}${situation(s, v.now)}${forms}`;
  return page(`Decide · ${s.site}`, body, signedIn(v.who, v.csrfToken));
}

export interface PreviewView extends Signed {
  plan: DecisionPlan;
  /** Why this preview is shown again instead of the decision being sent (the site changed since). */
  note?: string;
}

function comparison(before: Controls | null, after: Controls): SafeHtml {
  const now = before === null ? null : controlRows(before);
  const rows = controlRows(after).map(([label, value], i) => {
    const old = now === null ? '—' : now[i]![1];
    const changed = old !== value;
    const mark = changed ? markup` <em>(changes)</em>` : null;
    return markup`<tr${changed ? trustedHtml(' class="changed"') : null}><th scope="row">${label}</th>
<td data-label="Now">${old}</td><td data-label="After">${value}${mark}</td></tr>`;
  });
  return markup`<div class="frame"><table class="compare">
<caption class="why">The controls the crawler follows</caption>
<thead><tr><th scope="col">Control</th><th scope="col">Now</th><th scope="col">After you confirm</th></tr></thead>
<tbody>${rows}</tbody></table></div>`;
}

export function previewPage(v: PreviewView): string {
  const p = v.plan;
  const note = v.note === undefined ? null : markup`<p class="error" role="alert">${v.note}</p>`;
  const fields = ['mode', 'concurrency', 'revisitMultiplier'].map((f) =>
    hidden(f, p.payload[f] === undefined ? undefined : String(p.payload[f])),
  );
  const confirm =
    p.notAllowed !== null
      ? markup`<p class="error" role="alert">The loop would refuse this now: ${p.notAllowed}. Nothing was sent.</p>`
      : markup`<form method="post" action="${decidePath(p.site)}">
<input type="hidden" name="csrf" value="${v.csrfToken}">
${hidden('kind', p.kind)}${hidden('why', p.why)}${fields}${hidden('plan', p.fingerprint)}
<button type="submit">Confirm: ${p.kind} ${p.site}</button></form>`;
  return page(
    `Preview · ${p.kind} ${p.site}`,
    markup`${nav(p.site)}<h2>Preview: ${p.kind} ${p.site}</h2>${note}
<p role="status">Nothing has been sent yet. This is exactly what will change when you confirm.</p>
${comparison(p.before, p.after)}
<dl class="facts"><dt>Change</dt><dd>${p.before === null ? 'initial controls' : describeChange(p.before, p.after)}</dd>
<dt>The loop then</dt><dd>${p.loopAfter}</dd>
<dt>Audited as</dt><dd>${p.who} (the token you signed in with)</dd><dt>Why</dt><dd>${p.why}</dd></dl>
<h3>The same decision from a terminal</h3><pre><code>${p.command}</code></pre>
${confirm}<p><a href="${decidePath(p.site)}">Change or cancel</a> (nothing is sent)</p>`,
    signedIn(v.who, v.csrfToken),
  );
}

export interface ResultView extends Signed {
  site: string;
  decision: StoredDecision;
  /** The decision's control_audit rows (its change of the controls; none when it changed nothing). */
  audit: readonly AuditRow[];
  /** The site_controls record the crawler reads now. */
  controls: SiteControlsRecord | undefined;
  /** The loop's state now; null once the loop has ended (after a stop). */
  state: SiteHealthState | null;
}

export function resultPage(v: ResultView): string {
  const d = v.decision;
  const decidedAt = d.decidedAt.toISOString();
  const mode = d.mode === null ? '' : ` (${d.mode.mode})`;
  const audit =
    v.audit.length === 0
      ? markup`<p>No control change was recorded for this decision.</p>`
      : v.audit.map(
          (a) => markup`<dl class="facts"><dt>When</dt><dd>${when(a.changedAt.toISOString(), v.now)}</dd>
<dt>Who</dt><dd>${a.actor}</dd><dt>Change</dt><dd>${describeChange(a.oldControls, a.newControls)}</dd>
<dt>Why</dt><dd>${a.reason}</dd><dt>Controls version</dt><dd>${a.newControls.version}</dd></dl>`,
        );
  const c = v.controls;
  const controls =
    c === undefined
      ? markup`<p>No controls record for this site.</p>`
      : markup`<p>Version ${c.version}, written ${when(c.updatedAt.toISOString(), v.now)} by ${c.updatedBy}.</p>
${controlsList(c)}`;
  const s = v.state;
  const waiting = s?.awaitingHuman == null ? 'no' : markup`since ${when(s.awaitingHuman.since, v.now)}`;
  const loop =
    s === null
      ? markup`<p>The loop has ended.</p>`
      : markup`<dl class="facts"><dt>Band</dt><dd><span class="band-${s.band}">${s.band}</span></dd>
<dt>Waiting for a person</dt><dd>${waiting}</dd>
<dt>Score / smoothed</dt><dd>${s.score ?? '—'} / ${s.smoothedScore ?? '—'}</dd></dl>`;
  return page(
    `Applied · ${d.kind} ${v.site}`,
    markup`${nav(v.site)}<h2>Applied: ${d.kind}${mode} ${v.site}</h2>
<p role="status">The loop applied it: ${d.kind}${mode} by ${d.who}, ${when(decidedAt, v.now)}: ${d.why}</p>
<section class="panel"><h3>The controls the crawler now follows</h3>${controls}</section>
<section class="panel"><h3>The loop now</h3>${loop}</section>
<section class="panel"><h3>The audit entry</h3>${audit}</section>`,
    signedIn(v.who, v.csrfToken),
  );
}

/** A decision that changed nothing, or a page that cannot be shown: a heading, why, and where to go. */
export function problemPage(v: Signed & { site: string | null; title: string; message: string }): string {
  const back =
    v.site === null
      ? markup`<a href="/console/fleet">Back to the fleet</a>`
      : markup`<a href="${decidePath(v.site)}">Back to the Decide page</a> · <a href="/console/fleet">the fleet</a>`;
  return page(
    v.title,
    markup`<h2>${v.title}</h2><p class="error" role="alert">${v.message}</p><p>${back}</p>`,
    signedIn(v.who, v.csrfToken),
  );
}
