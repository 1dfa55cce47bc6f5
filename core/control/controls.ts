/**
 * The controls a crawler obeys for one site (the `site_controls` record) and the action policy that
 * moves them. Pure and deterministic: the workflow computes the next record here and an activity only
 * writes it, so a replay computes exactly the same steps.
 *
 * Shape of the policy (see docs/control-loop.md): multiplicative decrease, additive increase — the
 * congestion-control rule (AIMD). A degrading site loses a share of its concurrency every step while the
 * band holds, so pressure drops fast; a recovering site gets it back a few slots per step, so it is not
 * hit with full load the moment it looks healthy again. Steps are paced in time (`steps.*EveryMs`), not
 * per tick, so the tick interval does not change how fast a site is throttled.
 */
import { z } from 'zod';
import { HEALTH_BANDS, type HealthBand } from '../common/names';

const CONTROLS_SCHEMA = z.strictObject({
  /** Concurrent requests the crawler may have open against the site. */
  concurrencyLimit: z.int().min(1),
  /** Multiplier on the crawler's own revisit intervals (1 = as usual, 2 = half as often). */
  revisitMultiplier: z.number().min(1),
  paused: z.boolean(),
  /** Only canary fetches may run (the site is paused for production traffic). */
  canaryOnly: z.boolean(),
  /** For a cost-aware scheduler: how much more a useful page from this site costs than usual. */
  effectiveCostMultiplier: z.number().min(1),
  band: z.enum(HEALTH_BANDS),
  reason: z.string(),
});
export type Controls = z.output<typeof CONTROLS_SCHEMA>;

export const CONTROL_FIELDS = [
  'concurrencyLimit',
  'revisitMultiplier',
  'paused',
  'canaryOnly',
  'effectiveCostMultiplier',
  'band',
  'reason',
] as const;
export type ControlField = (typeof CONTROL_FIELDS)[number];

const positiveInt = (what: string) =>
  z
    .int({ error: `expected ${what} (a whole number of at least 1)` })
    .min(1, { error: `expected ${what} (a whole number of at least 1)` });
/** Ten years: the longest pace or persistence a setting may ask for (as core/control/config.ts's durations). */
const MAX_POLICY_MS = 3_650 * 86_400_000;
const policyMs = (min: number) => {
  const error = `expected milliseconds (a whole number of at least ${min})`;
  return z
    .int({ error })
    .min(min, { error })
    .max(MAX_POLICY_MS, { error: `expected milliseconds of at most ${MAX_POLICY_MS} (ten years)` });
};
const fraction = z
  .number({ error: 'expected a number between 0 and 1 (exclusive)' })
  .gt(0, { error: 'expected a number between 0 and 1 (exclusive)' })
  .lt(1, { error: 'expected a number between 0 and 1 (exclusive)' });

const ACTION_POLICY_SCHEMA = z
  .strictObject({
    concurrency: z
      .strictObject({
        /** The site's usual concurrency: where restoring stops. */
        nominal: positiveInt('a concurrency').default(16),
        /** Degrading never goes below this. */
        floor: positiveInt('a concurrency').default(1),
        /** Each throttle step: concurrency = max(floor, floor(concurrency × decreaseFactor)). */
        decreaseFactor: fraction.default(0.75),
        /** Each restore step after a degradation: concurrency + increaseStep, up to nominal. */
        increaseStep: positiveInt('a step').default(2),
      })
      .prefault({}),
    revisit: z
      .strictObject({
        /** Degrading never lengthens revisit intervals beyond this multiple. */
        max: z
          .number({ error: 'expected a number of at least 1' })
          .min(1, { error: 'expected a number of at least 1' })
          .default(8),
        /** Each throttle step: multiplier × increaseFactor, up to max. */
        increaseFactor: z
          .number({ error: 'expected a number above 1' })
          .gt(1, { error: 'expected a number above 1' })
          .default(1.5),
        /** Each restore step after a degradation: multiplier − decreaseStep, down to 1. */
        decreaseStep: z
          .number({ error: 'expected a positive number' })
          .gt(0, { error: 'expected a positive number' })
          .default(0.5),
      })
      .prefault({}),
    cost: z
      .strictObject({
        /** Each restore step after a degradation: effective-cost multiplier − decreaseStep, down to 1. */
        decreaseStep: z
          .number({ error: 'expected a positive number' })
          .gt(0, { error: 'expected a positive number' })
          .default(0.5),
        /**
         * A throttle step raises the effective cost to the score's value only when that is at least this
         * share above the current one (0.1: 1.50 → not before 1.65), so a score drifting by a point does
         * not rewrite and audit the record every step.
         */
        minRelativeRaise: z
          .number({ error: 'expected a number between 0 and 10' })
          .min(0, { error: 'expected a number between 0 and 10' })
          .max(10, { error: 'expected a number between 0 and 10' })
          .default(0.1),
      })
      .prefault({}),
    /**
     * How fast the controls move, in time rather than ticks: a band entered takes its first
     * step at once, then one step per this much time while it holds (several in one tick when ticks are
     * longer). Ticks without a score add no time: no step without evidence.
     */
    steps: z
      .strictObject({
        /** Degrading: one throttle step per this much time in the band. */
        degradeEveryMs: policyMs(1_000).default(60_000),
        /** Healthy after a degradation: one restore step per this much time, until nominal. */
        restoreEveryMs: policyMs(1_000).default(60_000),
      })
      .prefault({}),
    /** `resume` in cautious mode: degrading-band controls, whatever they were before the pause. */
    cautious: z
      .strictObject({
        /** Concurrency = max(floor, floor(nominal × concurrencyFactor)). */
        concurrencyFactor: z
          .number({ error: 'expected a number in (0, 1]' })
          .gt(0, { error: 'expected a number in (0, 1]' })
          .max(1, { error: 'expected a number in (0, 1]' })
          .default(0.5),
        revisitMultiplier: z
          .number({ error: 'expected a number of at least 1' })
          .min(1, { error: 'expected a number of at least 1' })
          .default(2),
      })
      .prefault({}),
    /** While a paused site waits for a person, remind them this often (checked on each tick). */
    reminderIntervalMs: z
      .int({ error: 'expected milliseconds (a whole number of at least 1000)' })
      .min(1_000, { error: 'expected milliseconds (a whole number of at least 1000)' })
      .default(4 * 3_600_000),
    /** Parser health below this alerts the parser's owner (again only after it recovered to threshold + 3). */
    parserAlertBelow: z
      .number({ error: 'expected a score 0-100' })
      .min(0, { error: 'expected a score 0-100' })
      .max(100, { error: 'expected a score 0-100' })
      .default(80),
    /**
     * Persistence of the parser alert: parser health must stay below the threshold on
     * consecutive scored ticks (at least two) spanning at least this long. 3 min: four 60 s ticks.
     */
    parserAlertAfterMs: policyMs(0).default(180_000),
    /** Route-specific failures notify the site's owner as a route alert. */
    routeAlerts: z.boolean({ error: 'expected true or false' }).default(true),
  })
  .superRefine((p, ctx) => {
    if (p.concurrency.floor > p.concurrency.nominal) {
      ctx.addIssue({
        code: 'custom',
        path: ['concurrency', 'floor'],
        message: `must not exceed concurrency.nominal (${p.concurrency.nominal})`,
      });
    }
  });
export type ActionPolicy = z.output<typeof ACTION_POLICY_SCHEMA>;
export type ActionPolicyInput = z.input<typeof ACTION_POLICY_SCHEMA>;

/** Hysteresis of the parser alert: it re-arms only once parser health is this far above the threshold. */
export const PARSER_ALERT_HYSTERESIS = 3;

/** Two decimals: multipliers are shown to people and compared for "did anything change". */
export function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

export function nominalControls(policy: ActionPolicy, band: HealthBand, reason: string): Controls {
  return {
    concurrencyLimit: policy.concurrency.nominal,
    revisitMultiplier: 1,
    paused: false,
    canaryOnly: false,
    effectiveCostMultiplier: 1,
    band,
    reason,
  };
}

/** True when the site runs below its usual pace (anything a restore step would change). */
export function isThrottled(c: Controls, policy: ActionPolicy): boolean {
  return c.concurrencyLimit < policy.concurrency.nominal || c.revisitMultiplier > 1 || c.effectiveCostMultiplier > 1;
}

/**
 * One degrading step: less concurrency, longer revisits (both bounded), and the effective cost raised to
 * what the score says — only raised: it comes down by restore steps once the site is healthy again, so
 * it does not jitter with every tick's score.
 */
export function degradeStep(c: Controls, policy: ActionPolicy, costMultiplier: number, reason: string): Controls {
  const { floor, decreaseFactor } = policy.concurrency;
  return {
    ...c,
    // min(current, …): a person may have resumed below the floor; degrading never raises it.
    concurrencyLimit: Math.min(c.concurrencyLimit, Math.max(floor, Math.floor(c.concurrencyLimit * decreaseFactor))),
    revisitMultiplier: Math.min(
      policy.revisit.max,
      Math.max(c.revisitMultiplier, round2(c.revisitMultiplier * policy.revisit.increaseFactor)),
    ),
    effectiveCostMultiplier: Math.max(1, c.effectiveCostMultiplier, round2(costMultiplier)),
    band: 'degrading',
    reason,
  };
}

/**
 * The effective cost a throttle step asks for: the score's value, but only once it is at
 * least `cost.minRelativeRaise` above the current one — otherwise the current value, so the record (and
 * its audit trail) changes when the cost changes meaningfully, not with every point of the score.
 */
export function meaningfulCost(current: number, target: number, policy: ActionPolicy): number {
  const next = round2(target);
  return next > current && next >= current * (1 + policy.cost.minRelativeRaise) ? next : current;
}

/** One restoring step towards the usual pace; never past it, never in one jump. */
export function restoreStep(c: Controls, policy: ActionPolicy, reason: string): Controls {
  const nominal = policy.concurrency.nominal;
  return {
    ...c,
    concurrencyLimit:
      c.concurrencyLimit < nominal
        ? Math.min(nominal, c.concurrencyLimit + policy.concurrency.increaseStep)
        : c.concurrencyLimit,
    revisitMultiplier: Math.max(1, round2(c.revisitMultiplier - policy.revisit.decreaseStep)),
    effectiveCostMultiplier: Math.max(1, round2(c.effectiveCostMultiplier - policy.cost.decreaseStep)),
    band: 'healthy',
    reason,
  };
}

/** `resume` in cautious mode: the degrading band's controls, production traffic back on. */
export function cautiousControls(c: Controls, policy: ActionPolicy, reason: string): Controls {
  return {
    ...c,
    concurrencyLimit: Math.max(
      policy.concurrency.floor,
      Math.floor(policy.concurrency.nominal * policy.cautious.concurrencyFactor),
    ),
    revisitMultiplier: policy.cautious.revisitMultiplier,
    paused: false,
    canaryOnly: false,
    band: 'degrading',
    reason,
  };
}

/** `resume` with explicit settings chosen by a person. */
export function explicitControls(
  c: Controls,
  settings: { concurrency: number; revisitMultiplier: number },
  reason: string,
): Controls {
  return {
    ...c,
    concurrencyLimit: settings.concurrency,
    revisitMultiplier: settings.revisitMultiplier,
    paused: false,
    canaryOnly: false,
    band: 'degrading',
    reason,
  };
}

export function pausedControls(c: Controls, band: HealthBand, reason: string): Controls {
  return { ...c, paused: true, canaryOnly: true, band, reason };
}

export function stoppedControls(c: Controls, reason: string): Controls {
  return { ...c, paused: true, canaryOnly: false, band: 'stopped', reason };
}

/** Fields whose value differs (the reason alone changing is not a change worth an audit row). */
export function changedFields(before: Controls | null, after: Controls): ControlField[] {
  if (before === null) return [...CONTROL_FIELDS];
  const fields = CONTROL_FIELDS.filter((f) => f !== 'reason' && before[f] !== after[f]);
  return fields.length > 0 ? [...fields, 'reason'] : [];
}

/** `concurrency 12→9, revisit ×1.5→×2.25` — for reasons, audit rows and the UI. */
export function describeChange(before: Controls | null, after: Controls): string {
  if (before === null)
    return (
      `initial controls: concurrency ${after.concurrencyLimit}, revisit ` +
      `×${after.revisitMultiplier}${after.paused ? ', paused' : ''}`
    );
  const parts: string[] = [];
  if (before.concurrencyLimit !== after.concurrencyLimit)
    parts.push(`concurrency ${before.concurrencyLimit}→${after.concurrencyLimit}`);
  if (before.revisitMultiplier !== after.revisitMultiplier)
    parts.push(`revisit ×${before.revisitMultiplier}→×${after.revisitMultiplier}`);
  if (before.effectiveCostMultiplier !== after.effectiveCostMultiplier)
    parts.push(`cost ×${before.effectiveCostMultiplier}→×${after.effectiveCostMultiplier}`);
  if (before.paused !== after.paused) parts.push(after.paused ? 'paused' : 'unpaused');
  if (before.canaryOnly !== after.canaryOnly) parts.push(after.canaryOnly ? 'canaries only' : 'all traffic');
  if (before.band !== after.band) parts.push(`band ${before.band}→${after.band}`);
  return parts.length > 0 ? parts.join(', ') : 'no change';
}

// Schemas leave a module shared by the workflow sandbox only through functions (workflows/shared-modules.ts).
export const controlsSchema = (): typeof CONTROLS_SCHEMA => CONTROLS_SCHEMA;
export const actionPolicySchema = (): typeof ACTION_POLICY_SCHEMA => ACTION_POLICY_SCHEMA;
