/**
 * The product's typed search attributes. Importable from workflow code (only @temporalio/common).
 * The worker registers them on the namespace at start; the dev server gets them as start flags.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const TargetSite = defineSearchAttributeKey('TargetSite', SearchAttributeType.KEYWORD);
/** The smoothed health score, 0-100. Absent while learning. */
export const HealthScore = defineSearchAttributeKey('HealthScore', SearchAttributeType.INT);
export const HealthBand = defineSearchAttributeKey('HealthBand', SearchAttributeType.KEYWORD);
export const ParserHealth = defineSearchAttributeKey('ParserHealth', SearchAttributeType.INT);
export const AwaitingHuman = defineSearchAttributeKey('AwaitingHuman', SearchAttributeType.BOOL);
/** Why the loop cannot do its job (`assessment_failed`); absent while all is well. */
export const LoopProblem = defineSearchAttributeKey('LoopProblem', SearchAttributeType.KEYWORD);

export const ALL_SEARCH_ATTRIBUTE_KEYS = [
  TargetSite,
  HealthScore,
  HealthBand,
  ParserHealth,
  AwaitingHuman,
  LoopProblem,
] as const;
