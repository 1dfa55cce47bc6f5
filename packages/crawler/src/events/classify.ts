/**
 * The outcome classifier: turns one request-outcome event into ok / hard_block / challenge / soft_block /
 * error, always with a human-readable reason and a machine-readable rule (docs/classification.md).
 *
 * Rule order (first match wins):
 *  1. explicit `outcome` from the crawler
 *  2. network error: connection_reset → hard_block, anything else → error
 *  3. the best content marker that counts (see {@link bestMarker}: vendor proof before generic wording
 *     before weak text before a vendor's script; at the same rank a challenge before a block):
 *     a challenge marker (any status) → challenge
 *  4. a block marker on a 1xx/2xx/3xx → soft_block (refusal disguised as success)
 *  5. a per-site status override
 *  6. a block marker on a 4xx/5xx → hard_block, attributed to the vendor
 *  7. 403 / 429 / 999 → hard_block
 *  8. 2xx far below the (site, page type) size norm → soft_block
 *  9. 2xx with an empty extraction where that page type usually yields records → soft_block
 * 10. other 1xx/2xx/3xx → ok; other 4xx/5xx → error
 * Content evidence beats status overrides: an override such as {"403": "ok"} says what a bare status
 * means on this site, it must not hide a challenge page served with it.
 */
import { type Outcome, type RequestOutcomeEvent } from './event';
import { compileMarker, type CompiledMarker, type MarkerMatch } from './compile-markers';
import {
  parseSiteClassifierConfig,
  SiteClassifierConfigError,
  type SiteClassifierConfig,
  type SiteClassifierConfigInput,
} from './config';
import { type MarkerSpecInput } from './marker-spec';
import { markerSpecSchema } from './marker-spec-schema';
import { BUILT_IN_MARKERS } from './markers';
import { NeedleRegistry, type NeedleScanner } from './needle-scan';
import { pageView, type PageView } from './page-view';

/** Size norm for the event's (site, page type): the median body size over `samples` responses. */
export interface SizeNorm {
  medianBytes: number;
  samples: number;
}

/** Records norm for the event's (site, page type): share of `samples` responses with ≥ 1 valid record. */
export interface RecordsNorm {
  usualRecordsRate: number;
  samples: number;
}

export interface Norms {
  sizeNorm?: SizeNorm | undefined;
  recordsNorm?: RecordsNorm | undefined;
}

export interface ClassifyContext extends Norms {
  /** Per-site settings (validated; compiled once per object and cached). */
  config?: SiteClassifierConfigInput | undefined;
}

export const CLASSIFICATION_RULES = [
  'explicit',
  'network_error',
  'challenge_marker',
  'block_marker',
  'status_override',
  'status',
  'size_norm',
  'empty_extraction',
] as const;
export type ClassificationRule = (typeof CLASSIFICATION_RULES)[number];

export interface ClassificationEvidence {
  markerId?: string;
  vendor?: string;
  matched?: string;
  /** For weak markers: what corroborated them ("status 403", "short page (812 bytes)"). */
  corroboratedBy?: string;
  status?: number;
  networkError?: string;
  bytes?: number;
  medianBytes?: number;
  sizeRatio?: number;
  samples?: number;
  usualRecordsRate?: number;
}

export interface Classification {
  outcome: Outcome;
  rule: ClassificationRule;
  reason: string;
  evidence?: ClassificationEvidence;
}

/** The fields the classifier reads; a full parsed event fits, and so does a hand-built subset. */
export type ClassifiableEvent = Pick<
  RequestOutcomeEvent,
  | 'status'
  | 'networkError'
  | 'outcome'
  | 'outcomeReason'
  | 'bytes'
  | 'extraction'
  | 'bodySample'
  | 'title'
  | 'headers'
  | 'pageType'
>;

export type Classifier = (event: ClassifiableEvent, norms?: Norms) => Classification;

interface CompiledConfig {
  settings: SiteClassifierConfig;
  /** Site markers first, then the catalogue's: the order breaks ties between equally ranked matches. */
  markers: readonly CompiledMarker[];
  scanner: NeedleScanner;
}

/**
 * The markers every site is classified with before its own: the built-in catalogue, or a deployment's
 * catalogue (built-in plus a marker file's additions and overrides). Compiled once; classifiers built
 * from it share the compiled matchers.
 */
export interface MarkerCatalogue {
  readonly markers: readonly CompiledMarker[];
  /** Finds all the catalogue markers' body texts in one pass (their matchers read its hits). */
  readonly scanner: NeedleScanner;
  /** Where the markers came from, for logs and `classify`'s explanation ("built-in", a file path). */
  readonly source: string;
}

/** Compiles validated-or-not marker specs; throws a zod error for an invalid one (validate first for messages). */
export function compileCatalogue(specs: readonly MarkerSpecInput[], source: string): MarkerCatalogue {
  const needles = new NeedleRegistry();
  const markers = specs.map((m) => compileMarker(markerSpecSchema().parse(m), needles));
  return { markers, scanner: needles.build(), source };
}

/**
 * A catalogue compiled when its markers are first read, not when the module loads: compiling the
 * built-in markers (validating each, building the needle automaton) costs ~30 ms, which a crawler would
 * otherwise pay at start-up whether it classifies anything or not (the package's budget: it loads in
 * under 100 ms).
 */
function lazyCatalogue(specs: readonly MarkerSpecInput[], source: string): MarkerCatalogue {
  let compiled: MarkerCatalogue | undefined;
  const get = () => (compiled ??= compileCatalogue(specs, source));
  return {
    get markers() {
      return get().markers;
    },
    get scanner() {
      return get().scanner;
    },
    source,
  };
}

export const BUILT_IN_CATALOGUE: MarkerCatalogue = lazyCatalogue(BUILT_IN_MARKERS, 'built-in');

/**
 * Validates a per-site configuration and precompiles its markers once; the returned function is what
 * hot paths should call. Throws {@link SiteClassifierConfigError} (errors as `field: message`).
 * `catalogue` replaces the built-in markers (a deployment's marker file); the site's own come first.
 */
export function compileClassifier(
  config: SiteClassifierConfigInput = {},
  catalogue: MarkerCatalogue = BUILT_IN_CATALOGUE,
): Classifier {
  const parsed = parseSiteClassifierConfig(config);
  if (!parsed.ok) throw new SiteClassifierConfigError(parsed.errors);
  const settings = parsed.config;
  const disabled = new Set(settings.disabledMarkers);
  // Site-specific markers first: they are the most specific evidence for that site.
  const markers = [
    ...settings.extraMarkers.map((m) => compileMarker(m)),
    ...catalogue.markers.filter((m) => !disabled.has(m.id)),
  ];
  const compiled: CompiledConfig = { settings, markers, scanner: catalogue.scanner };
  return (event, norms) => classifyWith(compiled, event, norms ?? {});
}

let defaultClassifier: Classifier | undefined;
const classifierCache = new WeakMap<object, Classifier>();

/**
 * Classifies one event. With `context.config`, the compiled classifier is cached per config object
 * (weakly), so pass the same object each time and treat it as immutable; or hold on to
 * {@link compileClassifier}'s result. Throws only for an invalid `context.config`.
 */
export function classifyOutcome(event: ClassifiableEvent, context: ClassifyContext = {}): Classification {
  let classifier: Classifier;
  if (context.config === undefined) {
    classifier = defaultClassifier ??= compileClassifier();
  } else {
    const cached = classifierCache.get(context.config);
    classifier = cached ?? compileClassifier(context.config);
    if (cached === undefined) classifierCache.set(context.config, classifier);
  }
  return classifier(event, context);
}

function classifyWith(config: CompiledConfig, event: ClassifiableEvent, norms: Norms): Classification {
  const { settings } = config;

  if (event.outcome !== undefined) {
    return {
      outcome: event.outcome,
      rule: 'explicit',
      reason: event.outcomeReason
        ? `explicit outcome from crawler: ${event.outcomeReason}`
        : 'explicit outcome from crawler',
    };
  }

  if (event.networkError !== undefined) return classifyNetworkError(event.networkError);

  const status = event.status;
  if (status === undefined) {
    // The schema forbids this; hand-built events can still get here and must not throw.
    return { outcome: 'error', rule: 'status', reason: 'neither a status nor a network error was reported' };
  }
  const success = status >= 200 && status < 300;
  const refusalStatus = status >= 400;

  const view = hasContent(event) ? pageView(event) : undefined;
  if (view && view.raw !== '') view.hits = config.scanner.scan(view.raw);
  const marker = view ? bestMarker(config.markers, view, settings.shortPageBytes) : undefined;
  if (marker?.kind === 'challenge') {
    return {
      outcome: 'challenge',
      rule: 'challenge_marker',
      reason: `${vendorText(marker)}challenge on status ${status}: ${markerText(marker)}`,
      evidence: markerEvidence(marker, status),
    };
  }
  const block = marker?.kind === 'block' ? marker : undefined;
  if (block && !refusalStatus) {
    return {
      outcome: 'soft_block',
      rule: 'block_marker',
      reason: `status ${status} carrying a ${vendorText(block)}block page: ${markerText(block)}`,
      evidence: markerEvidence(block, status),
    };
  }

  const override = settings.statusOverrides[String(status)];
  if (override !== undefined) {
    return {
      outcome: override,
      rule: 'status_override',
      reason: `site override: status ${status} counts as ${override}`,
      evidence: { status },
    };
  }

  if (block) {
    return {
      outcome: 'hard_block',
      rule: 'block_marker',
      reason: `status ${status} refused by ${vendorText(block) || 'the site: '}${markerText(block)}`,
      evidence: markerEvidence(block, status),
    };
  }

  const refusal = REFUSAL_STATUSES[status];
  if (refusal !== undefined)
    return { outcome: 'hard_block', rule: 'status', reason: `status ${status} (${refusal})`, evidence: { status } };

  if (success) {
    const small = sizeSoftBlock(event, norms.sizeNorm, settings, status);
    if (small) return small;
    const empty = emptySoftBlock(event, norms.recordsNorm, settings, status);
    if (empty) return empty;
  }

  if (status < 400) return { outcome: 'ok', rule: 'status', reason: `status ${status}`, evidence: { status } };
  return {
    outcome: 'error',
    rule: 'status',
    reason: `status ${status} (${status >= 600 ? 'non-standard' : status >= 500 ? 'server' : 'client'} error)`,
    evidence: { status },
  };
}

const NETWORK_REASONS: Readonly<Record<string, string>> = {
  timeout: 'network error: timeout',
  dns: 'network error: DNS resolution failed',
  tls: 'network error: TLS handshake failed',
  proxy: 'network error: proxy failure (a route problem, not the site)',
  other: 'network error: other',
};

function classifyNetworkError(kind: string): Classification {
  if (kind === 'connection_reset') {
    return {
      outcome: 'hard_block',
      rule: 'network_error',
      reason: 'connection reset (the site or its protection dropped the connection)',
      evidence: { networkError: kind },
    };
  }
  return {
    outcome: 'error',
    rule: 'network_error',
    reason: NETWORK_REASONS[kind] ?? `network error: ${kind}`,
    evidence: { networkError: kind },
  };
}

function hasContent(event: ClassifiableEvent): boolean {
  return (
    (event.bodySample !== undefined && event.bodySample !== '') ||
    (event.title !== undefined && event.title !== '') ||
    (event.headers !== undefined && Object.keys(event.headers).length > 0)
  );
}

/** Statuses that are a refusal by themselves, whatever the page says. */
const REFUSAL_STATUSES: Readonly<Record<number, string>> = {
  403: 'forbidden: explicit refusal',
  429: 'too many requests: rate limited',
  // Not a standard status: LinkedIn answers crawlers with it, and nothing else uses it.
  999: 'non-standard refusal of automated clients, as LinkedIn sends',
};

interface CountedMatch extends MarkerMatch {
  corroboratedBy?: string;
}

/**
 * The most telling marker that counts on this page. Every marker is tried (a page may carry a vendor's block
 * text and a generic captcha title, or a login form's reCAPTCHA and a real block page), and the match with the
 * best rank wins: a vendor's strong token, then generic strong wording (a block or challenge title), then weak
 * text that a refusal status or a short page corroborates, then a vendor's script that a refusal status or a
 * bare page corroborates. At the same rank a challenge beats a block (the page offers a way through), then the
 * catalogue order decides (site markers first).
 */
function bestMarker(
  markers: readonly CompiledMarker[],
  view: PageView,
  shortPageBytes: number,
): CountedMatch | undefined {
  let best: CountedMatch | undefined;
  let bestRank = Number.POSITIVE_INFINITY;
  let bare: string | undefined | null = null; // computed once, only if a script marker matches
  for (const marker of markers) {
    const base = EVIDENCE_RANK[marker.evidence] + (marker.vendor === 'generic' ? 1 : 0);
    const rank = base * 2 + (marker.kind === 'challenge' ? 0 : 1);
    if (rank >= bestRank) continue;
    const match = marker.match(view);
    if (!match) continue;
    if (match.evidence === 'strong') {
      best = match;
    } else if (match.evidence === 'weak') {
      const corroboratedBy = weakCorroboration(view, shortPageBytes);
      if (corroboratedBy === undefined) continue;
      best = { ...match, corroboratedBy };
    } else if (match.evidence === 'widget') {
      const corroboratedBy = widgetCorroboration(view, shortPageBytes);
      if (corroboratedBy === undefined) continue;
      best = { ...match, corroboratedBy };
    } else {
      if (bare === null) bare = scriptCorroboration(view, shortPageBytes);
      if (bare === undefined) continue;
      best = { ...match, corroboratedBy: bare };
    }
    bestRank = rank;
  }
  return best;
}

/** strong vendor 0, strong generic 1, weak vendor 2, weak generic 3, a widget or a vendor's script 4. */
const EVIDENCE_RANK: Readonly<Record<CompiledMarker['evidence'], number>> = {
  strong: 0,
  weak: 2,
  widget: 4,
  script: 4,
};

function weakCorroboration(view: PageView, shortPageBytes: number): string | undefined {
  if (view.status !== undefined && (view.status < 200 || view.status >= 300)) return `status ${view.status}`;
  if (view.size !== undefined && view.size <= shortPageBytes) return `short page (${view.size} bytes)`;
  return undefined;
}

/** The page may carry a vendor's script anywhere it likes; it only tells when the page refuses or is nothing else. */
const BARE_TEXT_CHARS = 120;

function scriptCorroboration(view: PageView, shortPageBytes: number): string | undefined {
  if (view.status !== undefined && view.status >= 400) return `status ${view.status}`;
  if (view.title !== undefined || view.size === undefined || view.size > shortPageBytes) return undefined;
  const text = visibleTextLength(view.raw);
  return text <= BARE_TEXT_CHARS ? `bare page (${view.size} bytes, no title, ${text} characters of text)` : undefined;
}

// A field a person types into or picks from: what a login, sign-up, search or contact form has and a captcha wall
// lacks.
const ENTRY_FIELD =
  /<textarea\b|<select\b|<input\b(?![^>]*\btype=["']?(?:hidden|submit|button|checkbox|radio|image|reset)\b)/i;

function widgetCorroboration(view: PageView, shortPageBytes: number): string | undefined {
  if (view.status !== undefined && view.status >= 400) return `status ${view.status}`;
  if (view.size === undefined || view.size > shortPageBytes || ENTRY_FIELD.test(view.raw)) return undefined;
  return `short page with no field to fill in (${view.size} bytes)`;
}

/** Characters of text a reader would see: tags, scripts, styles and white space left out. */
function visibleTextLength(body: string): number {
  return body
    .replace(/<(script|style|noscript)\b[^>]*>[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, '').length;
}

function vendorText(match: MarkerMatch): string {
  return match.vendor === 'generic' ? '' : `${match.vendor} `;
}

const EVIDENCE_WORDS: Readonly<Record<CompiledMarker['evidence'], string>> = {
  strong: 'strong marker',
  weak: 'weak marker',
  widget: 'captcha widget',
  script: "vendor's script",
};

function markerText(match: CountedMatch): string {
  const base = `marker ${match.markerId} matched ${match.matched}`;
  return match.corroboratedBy
    ? `${base} (${EVIDENCE_WORDS[match.evidence]}, corroborated by ${match.corroboratedBy})`
    : base;
}

function markerEvidence(match: CountedMatch, status: number): ClassificationEvidence {
  const evidence: ClassificationEvidence = {
    markerId: match.markerId,
    vendor: match.vendor,
    matched: match.matched,
    status,
  };
  if (match.corroboratedBy !== undefined) evidence.corroboratedBy = match.corroboratedBy;
  return evidence;
}

const validCount = (n: number | undefined): n is number => n !== undefined && Number.isFinite(n) && n >= 0;

function sizeSoftBlock(
  event: ClassifiableEvent,
  norm: SizeNorm | undefined,
  settings: SiteClassifierConfig,
  status: number,
): Classification | undefined {
  if (!norm || !validCount(event.bytes) || !validCount(norm.samples) || !validCount(norm.medianBytes)) return undefined;
  if (norm.samples < settings.minSizeSamples || norm.medianBytes <= 0) return undefined;
  const limit = settings.sizeRatio * norm.medianBytes;
  if (event.bytes >= limit) return undefined;
  return {
    outcome: 'soft_block',
    rule: 'size_norm',
    reason:
      `status ${status} but ${event.bytes} bytes, below ${settings.sizeRatio} × the median of ` +
      `${Math.round(norm.medianBytes)} bytes for ${pageTypeText(event)} on this site (${norm.samples} samples)`,
    evidence: {
      status,
      bytes: event.bytes,
      medianBytes: norm.medianBytes,
      sizeRatio: settings.sizeRatio,
      samples: norm.samples,
    },
  };
}

function emptySoftBlock(
  event: ClassifiableEvent,
  norm: RecordsNorm | undefined,
  settings: SiteClassifierConfig,
  status: number,
): Classification | undefined {
  const extraction = event.extraction;
  if (!extraction || !norm) return undefined;
  // A schema mismatch with 0 records is a parser problem (parser health), not the site refusing us.
  const empty = extraction.result === 'empty' || (extraction.result === 'ok' && extraction.validRecords === 0);
  if (!empty || !validCount(norm.samples) || !Number.isFinite(norm.usualRecordsRate)) return undefined;
  if (norm.samples < settings.minRecordsSamples || norm.usualRecordsRate < settings.minUsualRecordsRate)
    return undefined;
  const percent = Math.round(norm.usualRecordsRate * 100);
  return {
    outcome: 'soft_block',
    rule: 'empty_extraction',
    reason:
      `status ${status} but the extraction was empty, where ${pageTypeText(event)} on this site ` +
      `yield records ${percent}% of the time (${norm.samples} samples)`,
    evidence: { status, usualRecordsRate: norm.usualRecordsRate, samples: norm.samples },
  };
}

function pageTypeText(event: ClassifiableEvent): string {
  return event.pageType ? `"${event.pageType}" pages` : 'pages of this type';
}
