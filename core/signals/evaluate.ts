/**
 * How well a classifier recognises labelled pages: refusals caught, refusals put in the right class and
 * ordinary pages wrongly refused, per vendor and overall, in the three ways a page can reach it:
 * with its real status and headers, with its status only, as a bare 200 body). Pure: the caller reads the
 * pages (client/markers/labelled-pages.ts) and supplies the classify function — the product's, a
 * deployment's catalogue, or a peer's mapped onto our outcomes — so every figure is computed the same way.
 */
import { BODY_SAMPLE_CHARS, type Outcome } from '@target-health/crawler/events/event';
import type { ClassifiableEvent } from '@target-health/crawler/events/classify';
import { bodySampleOf } from '@target-health/crawler/events/text';

/** What a labelled page *is* (test/fixtures/real-pages/README.md "Labels"). */
export const LABEL_CLASSES = ['challenge', 'hard_block', 'soft_block', 'rate_limit', 'ok'] as const;
export type LabelClass = (typeof LABEL_CLASSES)[number];

export interface PageLabel {
  class: LabelClass;
  /** Who served the refusal, or on an ordinary page the bait it carries ("none"). */
  vendor: string;
  /** The status the source recorded with the page. */
  status?: number | undefined;
  /** The status the vendor documents for this page, when the source recorded none. */
  typicalStatus?: number | undefined;
  /** The headers the source recorded (names as recorded). */
  headers?: Readonly<Record<string, string>> | undefined;
}

export interface LabelledPage {
  /** For the misses list: the file name. */
  id: string;
  /** The whole body as served. */
  body: string;
  label: PageLabel;
}

export const EVALUATION_MODES = ['status-and-headers', 'status-only', 'body-only'] as const;
export type EvaluationMode = (typeof EVALUATION_MODES)[number];

export const MODE_TITLES: Readonly<Record<EvaluationMode, string>> = {
  'status-and-headers': 'real status and headers',
  'status-only': 'real status, no headers',
  'body-only': 'body only, as a 200',
};

/** What a classifier under test answers; the product's Classification fits. */
export interface Verdict {
  outcome: Outcome;
}
export type ClassifyPage = (event: ClassifiableEvent) => Verdict;

const REFUSALS: ReadonlySet<Outcome> = new Set<Outcome>(['hard_block', 'soft_block', 'challenge']);

/**
 * The body as a crawler sends it. The one place the sample is cut: when packages/crawler/src/events/text.ts gains the
 * crawler's own sampling of large pages (head and tail), call it here and every figure follows.
 */
export function crawlerBodySample(html: string): string {
  return bodySampleOf(html, BODY_SAMPLE_CHARS);
}

/** The status a page is fed with when its real status is used: recorded, else documented, else 200. */
export function realStatusOf(label: PageLabel): number {
  return label.status ?? label.typicalStatus ?? 200;
}

/** The event a crawler would send for `page` in `mode`. */
export function eventFor(page: LabelledPage, mode: EvaluationMode): ClassifiableEvent {
  const event: ClassifiableEvent = {
    status: mode === 'body-only' ? 200 : realStatusOf(page.label),
    bytes: Buffer.byteLength(page.body, 'utf8'),
    bodySample: crawlerBodySample(page.body),
  };
  const headers = page.label.headers;
  if (mode === 'status-and-headers' && headers !== undefined && Object.keys(headers).length > 0)
    event.headers = { ...headers };
  return event;
}

/** Whether `outcome` is the right class for a refusal labelled `label` (challenge ↔ challenge; refusals ↔ blocks). */
export function rightClass(label: LabelClass, outcome: Outcome): boolean {
  if (label === 'challenge') return outcome === 'challenge';
  if (label === 'ok') return outcome === 'ok';
  return outcome === 'hard_block' || outcome === 'soft_block';
}

export interface Tally {
  /** Refusal pages (any class but ok). */
  refusals: number;
  /** Refusals given any refusal outcome (hard_block, soft_block, challenge). */
  caught: number;
  /** Refusals given the right class. */
  rightClass: number;
  /** Ordinary pages. */
  ordinary: number;
  /** Ordinary pages given any outcome but ok. */
  falsePositives: number;
}

export interface Rates {
  /** caught / refusals (undefined without refusals). */
  recall: number | undefined;
  /** rightClass / refusals. */
  rightClassRate: number | undefined;
  /** falsePositives / ordinary (undefined without ordinary pages). */
  falsePositiveRate: number | undefined;
  /** caught / (caught + falsePositives): of the pages flagged, the share that were refusals. */
  precision: number | undefined;
}

export interface Miss {
  id: string;
  vendor: string;
  label: LabelClass;
  outcome: Outcome;
  /** `missed` (a refusal read as ok/error), `wrong-class`, `false-positive`. */
  kind: 'missed' | 'wrong-class' | 'false-positive';
}

export interface ModeResult {
  mode: EvaluationMode;
  overall: Tally & Rates;
  /** By the label's vendor (for ordinary pages: the bait they carry), sorted by name. */
  vendors: ReadonlyArray<{ vendor: string } & Tally & Rates>;
  misses: readonly Miss[];
}

export interface Evaluation {
  pages: number;
  modes: readonly ModeResult[];
}

const ratio = (n: number, d: number): number | undefined => (d === 0 ? undefined : n / d);

function withRates(t: Tally): Tally & Rates {
  return {
    ...t,
    recall: ratio(t.caught, t.refusals),
    rightClassRate: ratio(t.rightClass, t.refusals),
    falsePositiveRate: ratio(t.falsePositives, t.ordinary),
    precision: ratio(t.caught, t.caught + t.falsePositives),
  };
}

const emptyTally = (): Tally => ({ refusals: 0, caught: 0, rightClass: 0, ordinary: 0, falsePositives: 0 });

function count(t: Tally, label: LabelClass, outcome: Outcome): Miss['kind'] | undefined {
  if (label === 'ok') {
    t.ordinary += 1;
    if (outcome === 'ok') return undefined;
    t.falsePositives += 1;
    return 'false-positive';
  }
  t.refusals += 1;
  if (!REFUSALS.has(outcome)) return 'missed';
  t.caught += 1;
  if (!rightClass(label, outcome)) return 'wrong-class';
  t.rightClass += 1;
  return undefined;
}

/** Classifies every page in every mode and tallies the figures. */
export function evaluate(
  pages: readonly LabelledPage[],
  classify: ClassifyPage,
  modes: readonly EvaluationMode[] = EVALUATION_MODES,
): Evaluation {
  return {
    pages: pages.length,
    modes: modes.map((mode) => {
      const overall = emptyTally();
      const byVendor = new Map<string, Tally>();
      const misses: Miss[] = [];
      for (const page of pages) {
        const { outcome } = classify(eventFor(page, mode));
        const vendor = page.label.vendor;
        let tally = byVendor.get(vendor);
        if (!tally) byVendor.set(vendor, (tally = emptyTally()));
        count(tally, page.label.class, outcome);
        const kind = count(overall, page.label.class, outcome);
        if (kind !== undefined) misses.push({ id: page.id, vendor, label: page.label.class, outcome, kind });
      }
      const vendors = [...byVendor.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([vendor, t]) => ({ vendor, ...withRates(t) }));
      return { mode, overall: withRates(overall), vendors, misses };
    }),
  };
}
