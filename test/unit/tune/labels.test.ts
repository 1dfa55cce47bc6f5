/**
 * People's decisions as labels (client/tune/labels.ts), on scripted records: a resume soon after the loop's pause
 * into normal traffic is a false pause, a late one or into refusals a right pause, a stop confirms it; a pause by hand
 * while degrading (or healthy) is a late pause; a mark outranks the decisions; a configure after an incident is noted;
 * an incident nobody said anything about stays unlabelled.
 */
import { deriveLabels, type LabelDecision, type LabelInput, type LabelMove } from '../../../client/tune/labels';
import type { HealthBand } from '../../../core/common/names';

const M = 60_000;
const H = 60 * M;
const T = Date.parse('2026-11-24T08:00:00Z');

const move = (at: number, from: HealthBand | null, to: HealthBand, byLoop = true): LabelMove => ({
  at,
  from,
  to,
  byLoop,
  paused: to === 'resisting',
});

/** A wall: degrading at T, paused by the loop at T+5 min. */
const paused: LabelMove[] = [move(T, 'healthy', 'degrading'), move(T + 5 * M, 'degrading', 'resisting')];

const decision = (at: number, kind: LabelDecision['kind'], served: boolean | null = null): LabelDecision => ({
  at,
  kind,
  who: 'alice@example.com',
  why: 'checked',
  servedNormallyAfter: served,
});

function labels(o: Partial<LabelInput>) {
  return deriveLabels({
    moves: [],
    bandBefore: 'healthy',
    decisions: [],
    marks: [],
    settingsChanges: [],
    end: T + 24 * H,
    ...o,
  });
}

test('a resume 10 minutes after the pause into normal traffic: a false pause, judged at the resume', () => {
  const resumed = [
    ...paused,
    move(T + 15 * M, 'resisting', 'degrading', false),
    move(T + 30 * M, 'degrading', 'healthy'),
  ];
  const [i] = labels({ moves: resumed, decisions: [decision(T + 15 * M, 'resume', true)] });
  expect(i).toMatchObject({
    label: 'false-pause',
    from: T,
    to: T + 30 * M,
    loopPausedAt: T + 5 * M,
    judgedAt: T + 15 * M,
  });
  expect(i!.because).toMatch(/^resumed by alice@example\.com 10 min after the pause, .* served normally after it$/);
});

test('the same resume while the site still refused, or an hour later, or a stop: a right pause', () => {
  const cases: [LabelDecision, RegExp][] = [
    [decision(T + 15 * M, 'resume', false), /while the site still refused/],
    [decision(T + 65 * M, 'resume', true), /60 min after the pause, once the site had recovered/],
    [decision(T + 15 * M, 'resume', null), /too little traffic after it to judge/],
    [decision(T + 15 * M, 'stop'), /^stopped by alice@example\.com/],
  ];
  for (const [d, why] of cases) {
    const [i] = labels({ moves: paused, decisions: [d] });
    expect(i).toMatchObject({ label: 'right-pause', judgedAt: T + 5 * M });
    expect(i!.because).toMatch(why);
  }
});

test('a pause by hand while degrading: a late pause, judged at the person’s pause; while healthy too', () => {
  const degrading = [move(T, 'healthy', 'degrading')];
  const [late] = labels({ moves: degrading, decisions: [decision(T + 40 * M, 'pause')] });
  expect(late).toMatchObject({ label: 'late-pause', from: T, judgedAt: T + 40 * M });
  expect(late!.because).toMatch(/while the loop was degrading/);
  const [calm] = labels({ decisions: [decision(T + 40 * M, 'pause')] });
  expect(calm).toMatchObject({ label: 'late-pause', from: T + 40 * M - H, judgedAt: T + 40 * M });
  expect(calm!.because).toMatch(/while the loop was healthy/);
});

test('a pause by hand after the loop had paused is no late pause', () => {
  const out = labels({ moves: paused, decisions: [decision(T + 10 * M, 'pause')] });
  expect(out.map((i) => i.label)).toEqual([null]);
});

test('a mark outranks the decisions, the latest counts; on a degrade-only incident it is a (false) warning', () => {
  const mark = (verdict: 'right' | 'false_alarm', markedAt: number) => ({
    incidentAt: T + 10 * M,
    verdict,
    who: 'carol@example.com',
    why: 'looked at it',
    markedAt,
  });
  const [i] = labels({
    moves: paused,
    decisions: [decision(T + 15 * M, 'stop')],
    marks: [mark('right', T + 2 * H), mark('false_alarm', T + 3 * H)],
  });
  expect(i).toMatchObject({ label: 'false-pause' });
  expect(i!.because).toMatch(/^marked false alarm by carol@example\.com/);
  const degradeOnly = [move(T, 'healthy', 'degrading'), move(T + 20 * M, 'degrading', 'healthy')];
  expect(labels({ moves: degradeOnly, marks: [mark('false_alarm', T + H)] })[0]!.label).toBe('false-alarm');
  expect(labels({ moves: degradeOnly, marks: [mark('right', T + H)] })[0]!.label).toBe('right-warning');
});

test('nobody said anything: unlabelled; a configure the day after is noted', () => {
  const degradeOnly = [move(T, 'healthy', 'degrading'), move(T + 20 * M, 'degrading', 'healthy')];
  const [i] = labels({
    moves: degradeOnly,
    settingsChanges: [{ at: T + 5 * H, who: 'dave@example.com', why: 'too jumpy' }],
  });
  expect(i!.label).toBeNull();
  expect(i!.settingsChangedAfter).toBe('configure of 2026-11-24T13:00:00.000Z by dave@example.com (too jumpy)');
  expect(
    labels({ moves: degradeOnly, settingsChanges: [{ at: T + 2 * 24 * H, who: 'x', why: null }] })[0]!
      .settingsChangedAfter,
  ).toBeNull();
});
