/**
 * The scoring step stored with each tick's row is the loop's own: over random tick sequences — refusal waves,
 * a dead pool (route holds), canary mismatches (the floor), quiet ticks without a score, irregular gaps, failed
 * ticks, a person's resume (smoothing restarts) — the assessment (`assessAt`, the activity's and the replay
 * engine's code, fed what the workflow hands it, through JSON both ways as Temporal and jsonb carry it) stores
 * exactly the smoothed score and scored band of `planTick`'s summary of the same tick.
 */
import fc from 'fast-check';
import { type AssessAtDeps, assessAt } from '../../../activities/assess-site';
import { parseSiteHealthInput } from '../../../core/control/config';
import { afterDecision, decisionControls } from '../../../core/control/decide';
import { initialLoopState, type LoopState } from '../../../core/control/loop-state';
import { planTick } from '../../../core/control/plan';
import { planFailedTick } from '../../../core/control/plan/failed';
import { assessmentCarry } from '../../../core/control/scoring-step';
import type { TickAssessment } from '../../../core/control/tick-assessment';
import { makeWindow, type RouteWindow, type WindowInput } from '../../../core/scoring/window';
import type { Pool } from '../../../server/db/pool';
import { BASELINE, CONFIG, POLICY, SITE, window } from '../../kit/loop-fixtures';
import { runs } from '../../kit/sizes';

const T0 = Date.parse('2026-12-01T10:00:00.000Z');
const WINDOW = (() => {
  const parsed = parseSiteHealthInput({ site: SITE });
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.value.window;
})();

type Step =
  | {
      kind: 'tick';
      gapMs: number;
      requests: number;
      hard: number;
      challenge: number;
      soft: number;
      deadPool: boolean;
      mismatch: boolean;
    }
  | { kind: 'failed'; gapMs: number }
  | { kind: 'resume'; gapMs: number };

const share = fc.constantFrom(0, 0, 0.01, 0.1, 0.3, 0.6, 0.95);
const gap = fc.oneof(fc.constantFrom(1_000, 10_000, 60_000), fc.integer({ min: 1, max: 600_000 }));
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc.record({
      kind: fc.constant('tick' as const),
      gapMs: gap,
      // Below the minimum (50) now and then: no score, the band held.
      requests: fc.oneof(fc.integer({ min: 0, max: 60 }), fc.integer({ min: 100, max: 800 })),
      hard: share,
      challenge: share,
      soft: share,
      deadPool: fc.boolean(),
      mismatch: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('failed' as const), gapMs: gap }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('resume' as const), gapMs: gap }) },
);

/** The tick's current window: refusals scaled to fit the requests; a dead pool takes every refusal into pool a. */
function current(s: Extract<Step, { kind: 'tick' }>): WindowInput {
  const sum = s.hard + s.challenge + s.soft;
  const scale = sum > 1 ? 1 / sum : 1;
  // Whole counts, floored, handed over as exact shares (window() rounds requests × share back to them).
  const exact = (x: number): number => (s.requests === 0 ? 0 : Math.floor(s.requests * x * scale) / s.requests);
  const w = window(s.requests, { hard: exact(s.hard), challenge: exact(s.challenge), soft: exact(s.soft) });
  const routes: RouteWindow[] | undefined = s.deadPool
    ? [
        {
          pool: 'a',
          requests: Math.floor(s.requests / 2),
          hardBlocks: Math.floor(s.requests / 2),
          challenges: 0,
          softBlocks: 0,
        },
        { pool: 'b', requests: s.requests - Math.floor(s.requests / 2), hardBlocks: 0, challenges: 0, softBlocks: 0 },
      ]
    : undefined;
  const hardBlocks = s.deadPool ? Math.floor(s.requests / 2) : w.hardBlocks;
  return {
    ...w,
    ...(routes === undefined ? {} : { routes, hardBlocks, challenges: 0, softBlocks: 0 }),
    ...(routes === undefined ? {} : { extractionOk: s.requests - hardBlocks, validRecords: s.requests - hardBlocks }),
    canary: s.mismatch ? { runs: 2, failures: 0, mismatches: 1 } : { runs: 0, failures: 0, mismatches: 0 },
  };
}

/** The assessment's reads, answered without a database: the tick's window against the fixtures' baseline. */
function deps(win: WindowInput, asOf: Date): AssessAtDeps {
  const bounds = { from: new Date(asOf.getTime() - 600_000), to: asOf };
  return {
    pool: {} as Pool,
    readWindows: () =>
      Promise.resolve({
        site: SITE,
        current: makeWindow(win),
        baseline: makeWindow(BASELINE),
        bounds: { current: bounds, recent: bounds, baseline: bounds },
      }),
    findSite: () => Promise.resolve(undefined),
    canaryFailedDays: () => Promise.resolve([]),
    ownCanaryFetches: () => Promise.resolve({ requests: 0, failed: 0 }),
  };
}

/** JSON both ways, as the activity's input (Temporal's payloads) and its stored row (jsonb) carry values. */
const viaJson = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** What each compared tick was: its scored band, held for routes, floored by a canary mismatch, after a resume. */
interface Seen {
  scoredBand: string;
  held: boolean;
  floored: boolean;
  resumed: boolean;
}

async function check(steps: readonly Step[]): Promise<Seen[]> {
  let state: LoopState = initialLoopState('chain');
  let at = T0;
  const seen: Seen[] = [];
  for (const s of steps) {
    at += s.gapMs;
    if (s.kind === 'resume') {
      if (state.awaiting === null) continue;
      const d = { kind: 'resume' as const, who: 'alice', why: 'checked', mode: { mode: 'cautious' as const } };
      const decidedAt = new Date(at).toISOString();
      state = afterDecision(state, d, decisionControls(state, d, POLICY), {
        decisionKey: `d/${state.tick}`,
        via: 'signal',
        decidedAt,
      });
      continue;
    }
    const tick = state.tick + 1;
    if (s.kind === 'failed') {
      state = planFailedTick(state, { tick, at: new Date(at).toISOString(), message: 'bad data' }, CONFIG).state;
      continue;
    }
    const asOf = new Date(at);
    const win = current(s);
    const result = viaJson(
      await assessAt(deps(win, asOf), {
        site: SITE,
        asOf,
        window: WINDOW,
        scoring: CONFIG.scoring,
        ...viaJson(assessmentCarry(state)),
        evidenceSince: state.evidenceSince,
      }),
    );
    const t: TickAssessment = {
      assessmentKey: `${SITE}/chain/${tick}`,
      tick,
      assessedAt: asOf.toISOString(),
      ...result,
    };
    const plan = planTick(state, t, CONFIG);
    const summary = plan.state.history[plan.state.history.length - 1]!;
    expect(result.scoring).toEqual({ smoothedScore: summary.smoothedScore, scoredBand: summary.scoredBand });
    seen.push({
      scoredBand: summary.scoredBand,
      held: plan.state.heldFor !== null,
      floored: summary.reasons[0] === 'canary_mismatch',
      resumed: state.evidenceSince !== null,
    });
    state = plan.state;
  }
  return seen;
}

test('the stored scoring step equals the loop summary over random tick sequences', async () => {
  let compared = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), async (steps) => {
      compared += (await check(steps)).length;
    }),
    { numRuns: runs(200) },
  );
  expect(compared).toBeGreaterThan(0);
});

test('the sequences reach every scored band, route holds, the canary floor and a resume', async () => {
  // A fixed sequence through each case the property draws, so the property is known to cover them.
  const tickOf = (over: Partial<Extract<Step, { kind: 'tick' }>>): Step => ({
    kind: 'tick',
    gapMs: 60_000,
    requests: 400,
    hard: 0,
    challenge: 0,
    soft: 0,
    deadPool: false,
    mismatch: false,
    ...over,
  });
  const steps: Step[] = [
    tickOf({}),
    tickOf({ mismatch: true }),
    tickOf({}),
    tickOf({ deadPool: true }),
    tickOf({ hard: 0.3 }),
    tickOf({ requests: 20 }),
    { kind: 'failed', gapMs: 60_000 },
    tickOf({ hard: 0.3, challenge: 0.3, soft: 0.3 }),
    { kind: 'resume', gapMs: 30_000 },
    tickOf({ gapMs: 45_000 }),
    tickOf({ gapMs: 1_000 }),
  ];
  const seen = await check(steps);
  expect(seen).toHaveLength(9);
  expect(new Set(seen.map((x) => x.scoredBand))).toEqual(new Set(['healthy', 'degrading', 'resisting']));
  expect(seen.some((x) => x.held)).toBe(true);
  expect(seen.some((x) => x.floored)).toBe(true);
  expect(seen.some((x) => x.resumed)).toBe(true);
});
