/**
 * What a host of the hostile site does to the requests it gets: its mode (normal, challenging, soft
 * blocks, both at once, a wall, slowness), the schema that validates a mode sent to the admin endpoint, and the ramp —
 * a schedule of modes over time — evaluated lazily against the site's clock, so a test with an injected
 * clock moves through it without timers or sleeps.
 *
 * The refusal pages themselves are the scenario generator's vendor imitations (core/scenarios/pages.ts), so
 * the live site and the back-filled histories serve the same Cloudflare, DataDome, PerimeterX and Akamai
 * pages, and the classifier recognises them the same way.
 */
import { z } from 'zod';
import { CHALLENGE_KINDS, HARD_KINDS, type ChallengeKind, type HardKind } from '../../core/scenarios/pages';
import { expecting } from '@target-health/crawler/events/zod-issues';

/**
 * Soft blocks a host can serve (all with status 200):
 * - `unusual-traffic`: a Google-style "unusual traffic" shell (recognised by its text, corroborated by
 *   its short size: `generic-block-text`);
 * - `perimeterx-denied-200`: PerimeterX's "Access to this page has been denied" on a 200 (by its title);
 * - `small-page`: an application shell without its data (no marker at all: recognised only by the size
 *   norm, once the site has days of normal pages behind it);
 * - `empty-records`: the normal page layout with no products in it (recognised only by an empty
 *   extraction, when the crawler reports its extraction and the page type usually yields records).
 */
export const SOFT_PAGES = ['unusual-traffic', 'perimeterx-denied-200', 'small-page', 'empty-records'] as const;
export type SoftPage = (typeof SOFT_PAGES)[number];

/** The protection vendor in front of a host: its bait scripts on normal pages and its default refusal pages. */
export const PROTECTIONS = ['cloudflare', 'datadome', 'perimeterx', 'akamai', 'none'] as const;
export type Protection = (typeof PROTECTIONS)[number];

/** Refusal pages a host serves by default, by its protection (each overridable per mode). */
export const DEFAULT_PAGES: Readonly<Record<Protection, { challenge: ChallengeKind; soft: SoftPage; wall: HardKind }>> =
  {
    cloudflare: { challenge: 'cloudflare-challenge', soft: 'unusual-traffic', wall: 'cloudflare-block' },
    datadome: { challenge: 'datadome-captcha', soft: 'unusual-traffic', wall: 'bare-403' },
    perimeterx: { challenge: 'perimeterx-captcha', soft: 'perimeterx-denied-200', wall: 'bare-403' },
    akamai: { challenge: 'security-check-200', soft: 'unusual-traffic', wall: 'akamai-denied' },
    none: { challenge: 'security-check-200', soft: 'unusual-traffic', wall: 'bare-403' },
  };

const MAX_LATENCY_MS = 120_000;
const latencyMs = z
  .number(expecting('a delay in milliseconds (an integer from 0 to 120000)'))
  .int(expecting('a delay in milliseconds (an integer from 0 to 120000)'))
  .min(0, expecting('a delay in milliseconds (an integer from 0 to 120000)'))
  .max(MAX_LATENCY_MS, expecting('a delay in milliseconds (an integer from 0 to 120000)'));
const share = z
  .number(expecting('the share of requests refused, a number from 0 to 1 (e.g. 0.3)'))
  .min(0, expecting('the share of requests refused, a number from 0 to 1 (e.g. 0.3)'))
  .max(1, expecting('the share of requests refused, a number from 0 to 1 (e.g. 0.3)'));
const pagesOf = <T extends readonly [string, ...string[]]>(kinds: T) =>
  z
    .array(
      z.enum(kinds, expecting(`one of ${kinds.join(', ')}`)),
      expecting(`a list of page kinds from ${kinds.join(', ')}`),
    )
    .min(1, expecting(`a list of at least one page kind from ${kinds.join(', ')}`));

/**
 * `mixed`: challenges and soft blocks at once, as a bot-management escalation serves them — some
 * requests get a challenge, some an empty shell, the rest the page. One draw per request decides, so
 * the two shares are disjoint and must not add up to more than 1.
 */
const MixedModeSchema = z
  .strictObject({
    kind: z.literal('mixed'),
    challengeShare: share,
    softShare: share,
    challengePages: pagesOf(CHALLENGE_KINDS).optional(),
    softPages: pagesOf(SOFT_PAGES).optional(),
    latencyMs: latencyMs.optional(),
  })
  .refine((m) => m.challengeShare + m.softShare <= 1, {
    path: ['softShare'],
    message: 'challengeShare + softShare must be at most 1 (each request gets one answer); lower one of them',
  });

/** A host's mode. `latencyMs` (extra delay before answering) applies to every kind. */
export const HostModeSchema = z.discriminatedUnion(
  'kind',
  [
    z.strictObject({ kind: z.literal('normal'), latencyMs: latencyMs.optional() }),
    z.strictObject({ kind: z.literal('slow'), latencyMs }),
    z.strictObject({
      kind: z.literal('challenging'),
      share,
      pages: pagesOf(CHALLENGE_KINDS).optional(),
      latencyMs: latencyMs.optional(),
    }),
    z.strictObject({
      kind: z.literal('soft-block'),
      share,
      pages: pagesOf(SOFT_PAGES).optional(),
      latencyMs: latencyMs.optional(),
    }),
    MixedModeSchema,
    z.strictObject({
      kind: z.literal('wall'),
      page: z.enum(HARD_KINDS, expecting(`one of ${HARD_KINDS.join(', ')}`)).optional(),
      latencyMs: latencyMs.optional(),
    }),
  ],
  expecting(
    'a mode like {"kind": "challenging", "share": 0.3}; kind is one of normal, slow, challenging, soft-block, ' +
      'mixed, wall',
  ),
);
export type HostMode = z.infer<typeof HostModeSchema>;
export type ModeKind = HostMode['kind'];

export const NORMAL: HostMode = { kind: 'normal' };

const MAX_RAMP_STEPS = 100;
export const RampStepSchema = z.strictObject({
  afterMs: z
    .number(expecting('milliseconds after the ramp starts (an integer ≥ 0)'))
    .int(expecting('milliseconds after the ramp starts (an integer ≥ 0)'))
    .min(0, expecting('milliseconds after the ramp starts (an integer ≥ 0)')),
  mode: HostModeSchema,
});
export type RampStep = z.infer<typeof RampStepSchema>;

export const RampSchema = z.strictObject({
  steps: z
    .array(RampStepSchema, expecting('a list of steps like [{"afterMs": 0, "mode": {"kind": "normal"}}]'))
    .min(1, expecting('a list of at least one step'))
    .max(MAX_RAMP_STEPS, expecting(`a list of at most ${MAX_RAMP_STEPS} steps`)),
});

/** A ramp anchored at the time it was started, its steps in time order. */
export interface ScheduledRamp {
  startedAt: number;
  steps: readonly RampStep[];
}

export function scheduleRamp(steps: readonly RampStep[], startedAt: number): ScheduledRamp {
  // A stable sort: of two steps at the same time, the later-listed one wins (it is applied last).
  return { startedAt, steps: [...steps].sort((a, b) => a.afterMs - b.afterMs) };
}

/** The mode in force at `now`: the last step whose time has come, else `before` (the mode the ramp started from). */
export function modeAt(ramp: ScheduledRamp, before: HostMode, now: number): HostMode {
  let mode = before;
  for (const step of ramp.steps) {
    if (ramp.startedAt + step.afterMs > now) break;
    mode = step.mode;
  }
  return mode;
}

/** Whether every step of the ramp has come (the ramp can be folded into the plain mode). */
export function rampDone(ramp: ScheduledRamp, now: number): boolean {
  const last = ramp.steps[ramp.steps.length - 1];
  return last === undefined || ramp.startedAt + last.afterMs <= now;
}

/** Latency a mode adds before answering. */
export function latencyOf(mode: HostMode): number {
  return mode.latencyMs ?? 0;
}
