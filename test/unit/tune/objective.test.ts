/**
 * The objective (client/tune/objective.ts) on constructed replays: a labelled incident's part of the scorecard
 * (a false pause paused, a late pause missed or made with its lead, flaps, time throttled while healthy), a quiet
 * day's, and the lexicographic order — missed, then false pauses, then lead, then flaps, then time throttled.
 */
import type { Incident } from '../../../client/tune/labels';
import { compare, EMPTY, loopPaused, scoreIncident, scoreQuiet } from '../../../client/tune/objective';
import { parseSiteHealthInput } from '../../../core/control/config';
import type { HealthBand } from '../../../core/common/names';
import type { ReplayTick } from '../../../tools/replay/types';
import { replayTick } from '../../kit/replay-ticks';

const M = 60_000;
const T = Date.parse('2026-11-24T08:00:00Z');
const parsed = parseSiteHealthInput({ site: 'shop.example.com' });
if (!parsed.ok) throw new Error(parsed.message);
const policy = parsed.value.policy;

/** A tick a minute from T − 60 min; `bands[k]` is minute k's band ('P': resisting, paused by the loop). */
function ticks(bands: string): ReplayTick[] {
  return [...bands].map((c, k) => {
    const asOf = new Date(T - 60 * M + k * M).toISOString();
    const band: HealthBand = c === 'P' ? 'resisting' : c === 'd' ? 'degrading' : 'healthy';
    return replayTick(k, asOf, { band, ...(c === 'P' ? { awaitingSince: asOf } : {}) });
  });
}

const incident = (label: Incident['label'], judgedAt: number): Incident => ({
  from: T,
  to: T + 30 * M,
  loopPausedAt: null,
  label,
  judgedAt,
  because: '',
  settingsChangedAfter: null,
});

const quiet = 'h'.repeat(60);

test('a false pause paused again: one false pause, its throttled time; not paused: right', () => {
  const again = scoreIncident(incident('false-pause', T + 20 * M), ticks(`${quiet}dddPPPPPddhhhhh`), M, policy, 0);
  expect(again.card).toMatchObject({ falsePauses: 1, missed: 0, throttledHealthyMs: 10 * M });
  expect(again.right).toBe(false);
  expect(again.outcome).toBe('paused 08:03Z');
  const calm = scoreIncident(incident('false-pause', T + 20 * M), ticks(`${quiet}dddhhhhhhhh`), M, policy, 0);
  expect(calm.card).toMatchObject({ falsePauses: 0, throttledHealthyMs: 3 * M });
  expect(calm.right).toBe(true);
});

test('a late pause: missed when no pause by the person’s; made, its lead before it', () => {
  const missed = scoreIncident(incident('late-pause', T + 10 * M), ticks(`${quiet}ddddddddddddPPP`), M, policy, 0);
  expect(missed.card.missed).toBe(1);
  expect(missed.outcome).toBe('no pause by 08:10Z');
  const made = scoreIncident(incident('late-pause', T + 10 * M), ticks(`${quiet}dddddPPPPPPPPP`), M, policy, 0);
  expect(made.card).toMatchObject({ missed: 0, leadMs: 5 * M });
  expect(made.right).toBe(true);
});

test('flaps: entries into a warning beyond the first; a quiet day counts every one, and its pauses as false', () => {
  const flappy = scoreIncident(incident('late-pause', T + 10 * M), ticks(`${quiet}dhdhdPPP`), M, policy, 0);
  expect(flappy.card.flaps).toBe(2);
  const day = { from: T - 60 * M, to: T };
  expect(scoreQuiet(ticks('hhdhhdPPhh'), day, M, policy)).toEqual({
    missed: 0,
    falsePauses: 1,
    leadMs: 0,
    flaps: 2,
    throttledHealthyMs: 4 * M,
  });
  expect(loopPaused(ticks('P')[0]!)).toBe(true);
});

test('lexicographic: a miss outweighs any false pause, a false pause any lead, lead any flap or throttling', () => {
  const card = (o: Partial<typeof EMPTY>) => ({ ...EMPTY, ...o });
  expect(compare(card({ missed: 0, falsePauses: 3 }), card({ missed: 1 }))).toBeLessThan(0);
  expect(compare(card({ falsePauses: 0, leadMs: 0 }), card({ falsePauses: 1, leadMs: 60 * M }))).toBeLessThan(0);
  expect(compare(card({ leadMs: 2 * M, flaps: 5 }), card({ leadMs: M }))).toBeLessThan(0);
  expect(compare(card({ flaps: 0, throttledHealthyMs: 9 * M }), card({ flaps: 1 }))).toBeLessThan(0);
  expect(compare(card({ throttledHealthyMs: M }), card({ throttledHealthyMs: 2 * M }))).toBeLessThan(0);
  expect(compare(card({}), card({}))).toBe(0);
});
