/**
 * The canary band floor. A canary that returns a normal-looking page with the wrong value is the
 * hardest failure to detect and the most serious one: the site is serving content a real visitor would
 * not see, while every status code and parser says all is well. The seed's score cannot express that
 * (canaries are not one of its four signals), so this product rule sits on top of it, like total
 * refusal: when scoring raises `canary_mismatch`, the site's band is at least `floorBand` (default
 * degrading: throttle and look) and `canary_mismatch` heads the reasons. The score itself is untouched.
 *
 * Pure and deterministic: the workflow applies it after `advanceSiteState` on every tick.
 */
import { z } from 'zod';
import type { HealthBand } from '../common/names';
import type { Assessment } from '../scoring/assess';
import type { ReasonKey } from '../scoring/reasons';
import type { SiteScoringState, SiteTick } from '../scoring/site-state';

const CANARY_POLICY_SCHEMA = z.strictObject({
  /** The least serious band a site with a canary mismatch can be in; `none` turns the floor off. */
  floorBand: z
    .enum(['none', 'degrading', 'resisting'], { error: 'expected one of none, degrading, resisting' })
    .default('degrading'),
  /** Put `canary_mismatch` first among the reasons (notifications and the UI show the first ones). */
  headReasons: z.boolean({ error: 'expected true or false' }).default(true),
});
export type CanaryPolicy = z.output<typeof CANARY_POLICY_SCHEMA>;
export type CanaryPolicyInput = z.input<typeof CANARY_POLICY_SCHEMA>;
export const DEFAULT_CANARY_POLICY: CanaryPolicy = Object.freeze(CANARY_POLICY_SCHEMA.parse({}));

// learning sits with healthy: a site still learning its baseline has no score, but a canary has a known
// answer and needs no baseline, so a mismatch lifts a learning site to the floor as well.
const RANK: Partial<Record<HealthBand, number>> = { learning: 0, healthy: 0, degrading: 1, resisting: 2 };

export interface CanaryFloorInput {
  band: HealthBand;
  reasons: readonly ReasonKey[];
  /** `assessment.canary.mismatch`: scoring raised `canary_mismatch` this tick. */
  mismatch: boolean;
}

export interface CanaryFloorResult {
  band: HealthBand;
  reasons: ReasonKey[];
  /** True when the floor raised the band. */
  floored: boolean;
}

export function applyCanaryFloor(
  input: CanaryFloorInput,
  policy: CanaryPolicy = DEFAULT_CANARY_POLICY,
): CanaryFloorResult {
  const reasons = [...input.reasons];
  if (!input.mismatch) return { band: input.band, reasons, floored: false };
  if (policy.headReasons) {
    const rest = reasons.filter((r) => r !== 'canary_mismatch');
    reasons.splice(0, reasons.length, 'canary_mismatch', ...rest);
  } else if (!reasons.includes('canary_mismatch')) {
    reasons.push('canary_mismatch');
  }
  const current = RANK[input.band];
  // `stopped` (a person ended the loop) is never overridden.
  if (policy.floorBand === 'none' || current === undefined) return { band: input.band, reasons, floored: false };
  const floor = RANK[policy.floorBand]!;
  if (current >= floor) return { band: input.band, reasons, floored: false };
  return { band: policy.floorBand, reasons, floored: true };
}

/**
 * The same rule applied to a tick from `advanceSiteState`: the floored band replaces the tick's band
 * *and* the state's band, so next tick's hysteresis starts from the band the loop actually acted on
 * (leaving the floor then needs the usual margin, like any other band change).
 */
export function applyCanaryFloorToTick(
  previous: Pick<SiteScoringState, 'band'>,
  tick: SiteTick,
  assessment: Pick<Assessment, 'reasons' | 'canary'>,
  policy: CanaryPolicy = DEFAULT_CANARY_POLICY,
): { tick: SiteTick; reasons: ReasonKey[]; floored: boolean } {
  const result = applyCanaryFloor(
    { band: tick.band, reasons: assessment.reasons, mismatch: assessment.canary.mismatch },
    policy,
  );
  if (!result.floored) return { tick, reasons: result.reasons, floored: false };
  return {
    tick: {
      ...tick,
      band: result.band,
      bandChanged: previous.band !== result.band,
      state: { ...tick.state, band: result.band },
    },
    reasons: result.reasons,
    floored: true,
  };
}

// Schemas leave a module shared by the workflow sandbox only through functions (workflows/shared-modules.ts).
export const canaryPolicySchema = (): typeof CANARY_POLICY_SCHEMA => CANARY_POLICY_SCHEMA;
