/** The Fleet page: every site, most urgent first, filtered by a plain GET form (docs/console.md). */
import { bandLabel } from '../../../core/control/band-wording';
import { LISTED_BANDS } from '../../../server/api/schemas/sites';
import { ago, type Fleet, type FleetSite } from '../../../server/fleet/fleet';
import { sparkline } from '../../../server/fleet/sparkline';
import { markup, type SafeHtml, trustedHtml } from '../html';
import { page, signedIn } from '../layout';
import { sitePath } from '../paths';

export interface FleetView {
  fleet: Fleet;
  /** The filters as the person typed them, put back into the form. */
  form: { band: string; awaiting: boolean; site: string };
  who: string;
  csrfToken: string;
  now: Date;
}

function bandCell(s: FleetSite): SafeHtml {
  if (s.band === null) return markup`—`;
  // The listing has no tick reasons, so no refusal rule to name: the band as the score put it.
  const label = bandLabel(s.band, { kind: 'score' });
  return markup`<span class="band-${s.band}">${label}</span>${s.problem === null ? null : markup` (${s.problem})`}`;
}

const dash = (v: number | null): string => (v === null ? '—' : String(v));

function waitingCell(s: FleetSite, now: Date): SafeHtml {
  if (!s.awaitingHuman) return markup`—`;
  // The person on call goes straight from the fleet to deciding (./decide.ts).
  const decide = markup` · <a href="${sitePath(s.site, '/decide')}">Decide</a>`;
  if (s.awaitingSince === null) return markup`yes (since unknown)${decide}`;
  return markup`<time datetime="${s.awaitingSince}">${ago(s.awaitingSince, now)}</time>${decide}`;
}

function changeCell(s: FleetSite, now: Date): SafeHtml {
  const c = s.lastChange;
  if (c === null) return markup`—`;
  return markup`<time datetime="${c.at}">${ago(c.at, now)}</time> ${c.actor}: ${c.change}
<div class="why">${c.reason}</div>`;
}

function row(s: FleetSite, now: Date): SafeHtml {
  const trend = s.trend === null || s.trend.every((p) => p === null) ? '—' : sparkline(s.trend);
  return markup`<tr><th scope="row"><a href="${sitePath(s.site)}">${s.site}</a></th>
<td data-label="Band">${bandCell(s)}</td>
<td class="num" data-label="Score / smoothed">${dash(s.score)} / ${dash(s.smoothedScore)}</td>
<td class="spark" data-label="Last 24 h" aria-label="score over the last day">${trend}</td>
<td class="num" data-label="Parser">${dash(s.parserHealth)}</td>
<td data-label="Waiting since">${waitingCell(s, now)}</td>
<td data-label="Last change">${changeCell(s, now)}</td></tr>`;
}

/**
 * The summary line and the table: what the live stream (../fleet-stream.ts) sends again when it changes, so the
 * page and its updates are the same markup.
 */
export function fleetResults(v: Pick<FleetView, 'fleet' | 'now'>): SafeHtml {
  const c = v.fleet.counts;
  const summary =
    `${v.fleet.sites.length} site${v.fleet.sites.length === 1 ? '' : 's'}: ${c.resisting} resisting, ` +
    `${c.degrading} degrading, ${c.learning} learning, ${c.healthy} healthy; ` +
    `${v.fleet.awaiting} waiting for a person`;
  const table =
    v.fleet.sites.length === 0
      ? markup`<p>No site matches.</p>`
      : markup`<div class="frame"><table><caption class="why">Most urgent first</caption><thead><tr>
<th scope="col">Site</th><th scope="col">Band</th><th scope="col">Score / smoothed</th><th scope="col">Last 24 h</th>
<th scope="col">Parser</th><th scope="col">Waiting for a person since</th><th scope="col">Last change and why</th>
</tr></thead><tbody>${v.fleet.sites.map((s) => row(s, v.now))}</tbody></table></div>`;
  return markup`<p role="status">${summary}</p>${table}`;
}

/** The element the page's script (../assets.ts) fills with the stream's updates. */
export const FLEET_RESULTS_ID = 'fleet-results';

export function fleetPage(v: FleetView): string {
  const selected = trustedHtml(' selected');
  const options = ['', ...LISTED_BANDS].map(
    (b) => markup`<option value="${b}"${b === v.form.band ? selected : null}>${b === '' ? 'any' : b}</option>`,
  );
  return page(
    'Fleet',
    markup`<form class="filters" method="get" action="/console/fleet" role="search">
<div><label for="band">Band</label><select id="band" name="band">${options}</select></div>
<div><label for="site">Name contains or matches</label>
<input id="site" name="site" value="${v.form.site}" placeholder="shop or *.example.com"></div>
<div class="check"><input id="awaiting" name="awaiting" type="checkbox" value="true"${
      v.form.awaiting ? trustedHtml(' checked') : null
    }> <label for="awaiting">Only waiting for a person</label></div>
<div><button type="submit">Filter</button></div></form>
<div id="${FLEET_RESULTS_ID}">${fleetResults(v)}</div>
<p class="why" id="fleet-live">Reload to update.</p><script src="/console/assets/fleet-live.js" defer></script>`,
    signedIn(v.who, v.csrfToken),
  );
}
