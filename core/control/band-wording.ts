/**
 * The one wording of a site's band and of what put it there, shared by every surface that says it: the
 * loop's own control reasons and notifications (core/control/plan/band.ts), `status`, `explain`,
 * `history`, `review`, `replay`, the chat notifications' recent ticks, the run's details in the Temporal UI
 * (core/control/details.ts), and the README's band table (a unit test keeps the README's table equal to
 * `bandTableMarkdown()`).
 *
 * Why it exists: the band table says resisting is a score below 50, yet a refusal rule makes a site
 * resisting — and pauses it — whatever its score (core/scoring/site-state.ts: a fired rule comes first).
 * Printed as `resisting (score 75, smoothed 95): paused`, that reads as a contradiction. Worded here, it
 * always names the rule: `resisting: paused by the majority-refusal rule; score 75, smoothed 95`.
 *
 * What put the band there is read from the reasons of the tick that set it: an assessment lists
 * `total_refusal` or `majority_refusal` exactly when that rule fired (core/scoring/assess.ts), so the
 * stored assessments of older ticks say it too — no new field is needed to tell.
 *
 * Pure and free of Node builtins: the workflow words its reasons and notifications with it.
 */
import type { HealthBand } from '../common/names';
import { DEFAULT_SCORING_CONFIG, type BandConfig } from '../scoring/config';

/** The refusal rules, by precedence: total refusal is listed (and wins) when both fire. */
export const REFUSAL_RULES = ['total_refusal', 'majority_refusal'] as const;
export type RefusalRule = (typeof REFUSAL_RULES)[number];

/** What put a site in its band. */
export type BandCause =
  /** A refusal rule fired: resisting whatever the score says. */
  | { kind: 'rule'; rule: RefusalRule }
  /** The smoothed score through the thresholds and their hysteresis (or the canary floor: `canary_mismatch`). */
  | { kind: 'score' }
  /** A person's decision set it (a resume, a pause by hand, a stop). */
  | { kind: 'person' }
  /** Nothing judged: learning its baseline, or stopped. */
  | { kind: 'none' };

const RULE_NAMES: Record<RefusalRule, string> = {
  total_refusal: 'the total-refusal rule',
  majority_refusal: 'the majority-refusal rule',
};

/** The refusal rule among a tick's reasons (the first, when both are there), or null. */
export function refusalRuleIn(reasons: readonly string[]): RefusalRule | null {
  return REFUSAL_RULES.find((rule) => reasons.includes(rule)) ?? null;
}

/**
 * What put a site in `band`, from the reasons of the tick that set it. Only resisting can be a rule's
 * doing: a fired rule always makes the band resisting (and pauses the site).
 */
export function bandCause(band: HealthBand, reasons: readonly string[]): BandCause {
  if (band === 'learning' || band === 'stopped') return { kind: 'none' };
  const rule = band === 'resisting' ? refusalRuleIn(reasons) : null;
  return rule === null ? { kind: 'score' } : { kind: 'rule', rule };
}

/**
 * What a rule made the loop do: `paused by the majority-refusal rule`. Null for every other cause: a band
 * the score set is read from the scores beside it and the band table, and a score band is not claimed
 * as the score's doing, since a canary mismatch can floor the band too (core/canaries/band-floor.ts;
 * its `canary_mismatch` then heads the reasons).
 */
export function bandAction(band: HealthBand, cause: BandCause): string | null {
  return cause.kind === 'rule' && band === 'resisting' ? `paused by ${RULE_NAMES[cause.rule]}` : null;
}

/**
 * `score 75, smoothed 95`; `no score, smoothed 90`. Without `smoothedScore` (a stored tick: the loop does
 * not store it) only the raw score is said.
 */
export function scoresText(score: number | null, smoothedScore?: number | null): string {
  const raw = score === null ? 'no score' : `score ${score}`;
  return smoothedScore === undefined || smoothedScore === null ? raw : `${raw}, smoothed ${smoothedScore}`;
}

export interface BandFacts {
  band: HealthBand;
  /** The reasons of the tick that set the band. */
  reasons: readonly string[];
  score: number | null;
  /** Undefined where it is not known (stored ticks). */
  smoothedScore?: number | null;
  /**
   * What put the band there when a tick before the one these scores are of set it — a band frozen while the
   * loop waits for a person keeps the pausing tick's cause. Default: bandCause(band, reasons).
   */
  cause?: BandCause;
}

/**
 * The band, what put it there and the scores, as one phrase:
 *   `resisting: paused by the majority-refusal rule; score 75, smoothed 95`
 *   `resisting: score 40, smoothed 45`
 *   `degrading: score 70, smoothed 72`
 */
export function bandPhrase(f: BandFacts): string {
  if (f.band === 'stopped') return 'stopped: a person ended the loop';
  const action = bandAction(f.band, f.cause ?? bandCause(f.band, f.reasons));
  return `${f.band}: ${action === null ? '' : `${action}; `}${scoresText(f.score, f.smoothedScore)}`;
}

/**
 * A band where a table has one short cell for it: the band, and the rule in parentheses when a rule
 * set it (`resisting (paused by the majority-refusal rule)`); the score bands need no more — the table's
 * score column says why. `cause`: bandCause of the tick that set the band.
 */
export function bandLabel(band: HealthBand, cause: BandCause): string {
  return cause.kind === 'rule' ? `${band} (${bandAction(band, cause)})` : band;
}

// --- The band table -------------------------------------------------------------------------------

export interface BandTableRow {
  band: 'healthy' | 'degrading' | 'resisting';
  /** When a site is in it. */
  when: string;
  /** What the loop does there. */
  action: string;
}

/** The bands with their default thresholds (docs/scoring.md has the hysteresis) and what the loop does. */
export function bandTable(bands: BandConfig = DEFAULT_SCORING_CONFIG.bands): BandTableRow[] {
  return [
    {
      band: 'healthy',
      when: `score ${bands.healthyMin}–100`,
      action: 'nothing (restores throttled sites step by step)',
    },
    {
      band: 'degrading',
      when: `score ${bands.degradingMin}–${bands.healthyMin - 1}`,
      action:
        "lowers concurrency, lengthens revisit intervals, raises the site's effective cost, checks whether " +
        'failures are site-wide or route-specific',
    },
    {
      band: 'resisting',
      when: `score below ${bands.degradingMin}, **or a refusal rule fired, whatever the score**`,
      action: 'pauses the site, keeps only canaries running, notifies a person and **waits for their decision**',
    },
  ];
}

/** The table as Markdown lines, exactly as the README shows it. */
export function bandTableMarkdown(bands: BandConfig = DEFAULT_SCORING_CONFIG.bands): string[] {
  return [
    '| Band | When | What the loop does |',
    '|---|---|---|',
    ...bandTable(bands).map((r) => `| ${r.band} | ${r.when} | ${r.action} |`),
  ];
}
