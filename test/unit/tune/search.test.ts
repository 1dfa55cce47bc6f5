/**
 * The bounded space and the search (client/tune/space.ts, search.ts) with a scripted evaluation: neighbours stay
 * on the grid, inside the bounds and valid (weights summing to 100); the search walks to the best candidate of a
 * scripted objective, is deterministic, prunes nothing it needs, and a patch carries exactly the moved settings.
 */
import { EMPTY, type Scorecard } from '../../../client/tune/objective';
import { search } from '../../../client/tune/search';
import { DIMENSIONS, diff, neighbours, outOfBounds, patchOf, WEIGHT_MAX, WEIGHT_MIN } from '../../../client/tune/space';
import { mergeSettings } from '../../../core/control/settings-change';
import { parseSiteHealthInput, siteHealthConfigSchema, type SiteHealthConfig } from '../../../core/control/config';

const parsed = parseSiteHealthInput({ site: 'shop.example.com' });
if (!parsed.ok) throw new Error(parsed.message);
const { carried: _c, ...defaults } = parsed.value;

test('neighbours: one grid step per setting, weights shifted in pairs within bounds, all valid', () => {
  const ns = neighbours(defaults);
  expect(ns.length).toBeGreaterThan(DIMENSIONS.length);
  for (const n of ns) {
    expect(siteHealthConfigSchema().safeParse(n.config).success).toBe(true);
    expect(outOfBounds(n.config, defaults)).toBeNull();
    const w = n.config.scoring.health.weights;
    expect(w.hard_block + w.challenge + w.soft_block + w.latency).toBe(100);
    for (const v of Object.values(w)) expect(v >= WEIGHT_MIN && v <= WEIGHT_MAX).toBe(true);
    const byField = (a: { field: string }, b: { field: string }) => a.field.localeCompare(b.field);
    expect(diff(defaults, n.config).sort(byField)).toEqual([...n.moves].sort(byField));
  }
  expect(ns.map((n) => n.moves[0]!.field)).toContain('scoring.majorityRefusal.consecutiveTicks');
});

test('out of bounds is said, naming the setting', () => {
  const far = { ...defaults, scoring: { ...defaults.scoring, bands: { ...defaults.scoring.bands, healthyMin: 95 } } };
  expect(outOfBounds(far, defaults)).toBe('scoring.bands.healthyMin 95 is outside 70–90');
});

/** A scripted objective: missed until the threshold is 0.4 or below, false pauses until 4 ticks are needed. */
function scripted(c: SiteHealthConfig): Scorecard {
  const m = c.scoring.majorityRefusal;
  return {
    ...EMPTY,
    missed: m.threshold <= 0.4 ? 0 : 1,
    falsePauses: m.consecutiveTicks >= 4 ? 0 : 1,
    leadMs: -m.consecutiveTicks * 60_000,
  };
}

test('the search walks to the best of a scripted objective, the same way every time', async () => {
  const run = () => search(defaults, (c) => Promise.resolve(scripted(c)));
  const a = await run();
  const b = await run();
  expect(a.current).toMatchObject({ missed: 1, falsePauses: 1 });
  const best = a.better[0]!;
  expect(best.card).toMatchObject({ missed: 0, falsePauses: 0, leadMs: -4 * 60_000 });
  expect(best.config.scoring.majorityRefusal).toMatchObject({ threshold: 0.4, consecutiveTicks: 4 });
  expect(b.better.map((e) => e.card)).toEqual(a.better.map((e) => e.card));
  expect(a.evaluations).toBe(b.evaluations);
  // The patch configure is sent: only what moved, and laid over the current settings it gives the winner.
  const patch = patchOf(diff(defaults, best.config));
  expect(patch).toEqual({ scoring: { majorityRefusal: { threshold: 0.4, consecutiveTicks: 4 } } });
  expect(siteHealthConfigSchema().parse(mergeSettings(defaults, patch))).toEqual(best.config);
});

test('a candidate the evaluation prunes (null) is never proposed', async () => {
  const result = await search(defaults, (c, bound) =>
    Promise.resolve(bound !== null && c.scoring.majorityRefusal.threshold < 0.5 ? null : scripted(c)),
  );
  for (const e of result.better) expect(e.config.scoring.majorityRefusal.threshold).toBeGreaterThanOrEqual(0.5);
});
