/**
 * Why a saved page gets its verdict (`target-health classify`): the classifier's outcome, rule and reason
 * on the event a crawler would send for it, and for a marker verdict which marker, its vendor and
 * evidence level, what matched and where in the page (character offset, line and column, a snippet).
 */
import {
  compileClassifier,
  type Classification,
  type ClassifiableEvent,
  type MarkerCatalogue,
} from '@target-health/crawler/events/classify';
import type { MarkerMatch } from '@target-health/crawler/events/compile-markers';
import { crawlerBodySample } from '../../core/signals/evaluate';
import { plural } from '../../core/common/plural';
import { pageView } from '@target-health/crawler/events/page-view';

export interface PageInput {
  body: string;
  status: number;
  headers: Record<string, string>;
}

export interface Where {
  /** Character offset in the page (as sent: the sample's first characters). */
  offset: number;
  line: number;
  column: number;
  /** The page's text around the match, on one line. */
  snippet: string;
}

export interface PageExplanation {
  outcome: Classification['outcome'];
  rule: Classification['rule'];
  reason: string;
  marker?: {
    id: string;
    vendor: string;
    kind: string;
    evidence: string;
    matched: string;
    corroboratedBy?: string;
    where?: Where;
  };
  markers: { source: string; count: number };
  page: { bytes: number; charsSent: number; status: number; headers: number };
}

const SNIPPET_SIDE = 40;

function whereOf(sample: string, offset: number, length: number): Where {
  const before = sample.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  const from = Math.max(0, offset - SNIPPET_SIDE);
  const to = Math.min(sample.length, offset + length + SNIPPET_SIDE);
  const text = sample.slice(from, to).replace(/\s+/g, ' ');
  return { offset, line, column, snippet: `${from > 0 ? '…' : ''}${text}${to < sample.length ? '…' : ''}` };
}

/** The length of what matched in the body, from the match's text (`"needle"` or `"a" + "b"`). */
function matchedLength(match: MarkerMatch): number {
  const first = /"([^"]*)"/.exec(match.matched);
  return first?.[1]?.length ?? 0;
}

export function explainPage(input: PageInput, catalogue: MarkerCatalogue): PageExplanation {
  const bodySample = crawlerBodySample(input.body);
  const event: ClassifiableEvent = { status: input.status, bytes: Buffer.byteLength(input.body, 'utf8'), bodySample };
  if (Object.keys(input.headers).length > 0) event.headers = input.headers;
  const verdict = compileClassifier({}, catalogue)(event);
  const out: PageExplanation = {
    outcome: verdict.outcome,
    rule: verdict.rule,
    reason: verdict.reason,
    markers: { source: catalogue.source, count: catalogue.markers.length },
    page: {
      bytes: event.bytes ?? 0,
      charsSent: bodySample.length,
      status: input.status,
      headers: Object.keys(input.headers).length,
    },
  };
  const id = verdict.evidence?.markerId;
  if (id === undefined) return out;
  // The classifier's evidence names the marker; matching it again tells where it matched.
  const marker = catalogue.markers.find((m) => m.id === id);
  const match = marker?.match(pageView(event));
  out.marker = {
    id,
    vendor: verdict.evidence?.vendor ?? match?.vendor ?? 'unknown',
    kind: marker?.kind ?? 'unknown',
    evidence: marker?.evidence ?? 'unknown',
    matched: verdict.evidence?.matched ?? match?.matched ?? '',
  };
  if (verdict.evidence?.corroboratedBy !== undefined) out.marker.corroboratedBy = verdict.evidence.corroboratedBy;
  if (match?.offset !== undefined) out.marker.where = whereOf(bodySample, match.offset, matchedLength(match));
  return out;
}

export function formatPageExplanation(e: PageExplanation): string {
  const rows: Array<[string, string]> = [
    ['outcome', e.outcome],
    ['rule', e.rule],
    ['reason', e.reason],
  ];
  if (e.marker) {
    const m = e.marker;
    rows.push(['marker', `${m.id} (${m.vendor}; ${m.kind}, ${m.evidence} evidence)`]);
    rows.push(['matched', m.matched]);
    if (m.corroboratedBy !== undefined)
      rows.push(['corroborated', `by ${m.corroboratedBy} (a weak marker counts only so)`]);
    rows.push([
      'where',
      m.where
        ? `character ${m.where.offset} (line ${m.where.line}, column ${m.where.column}): ${m.where.snippet}`
        : 'the title, headers or status (not the body)',
    ]);
  }
  rows.push([
    'page',
    `${e.page.bytes} bytes, ${e.page.charsSent} characters sent; status ${e.page.status}, ` +
      `${plural(e.page.headers, 'header')}`,
  ]);
  rows.push(['markers', `${e.markers.source} (${e.markers.count} markers)`]);
  return `${rows.map(([k, v]) => `${`${k}:`.padEnd(14)}${v}`).join('\n')}\n`;
}
