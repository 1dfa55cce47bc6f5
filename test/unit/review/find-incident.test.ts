import { type BandMove, bandAt, findIncident } from '../../../client/review/find-incident';

const M = 60_000;
const H = 60 * M;
const T = Date.parse('2026-11-24T12:00:00Z');
const move = (minutes: number, from: BandMove['from'], to: BandMove['to']): BandMove => ({
  at: T + minutes * M,
  from,
  to,
});
const NOW = T + 24 * H;

describe('findIncident', () => {
  const wave = [
    move(-60, 'healthy', 'degrading'),
    move(-50, 'degrading', 'resisting'),
    move(40, 'resisting', 'degrading'),
    move(70, 'degrading', 'healthy'),
  ];

  test(
    'from the first move away from healthy to the return to healthy, across bands in between (anchored on the ' +
      'entry from calm)',
    () => {
      expect(findIncident(wave, 'healthy', T, 6 * H, 6 * H, NOW)).toEqual({
        anchor: T - 60 * M,
        from: T - 60 * M,
        to: T + 70 * M,
        openStart: false,
        openEnd: false,
        worst: 'resisting',
      });
    },
  );

  test('of two incidents, the one whose entry into degrading or resisting is nearest T', () => {
    const two = [
      move(-200, 'healthy', 'degrading'),
      move(-190, 'degrading', 'healthy'),
      move(30, 'healthy', 'degrading'),
      move(45, 'degrading', 'healthy'),
    ];
    expect(findIncident(two, 'healthy', T, 6 * H, 6 * H, NOW)).toMatchObject({
      from: T + 30 * M,
      to: T + 45 * M,
      worst: 'degrading',
    });
    expect(findIncident(two, 'healthy', T - 150 * M, 6 * H, 6 * H, NOW)).toMatchObject({
      from: T - 200 * M,
      to: T - 190 * M,
    });
  });

  test('a stop is part of the incident, not its end; without a return the end is the bound (or now)', () => {
    const stopped = [move(-30, 'healthy', 'resisting'), move(60, 'resisting', 'stopped')];
    expect(findIncident(stopped, 'healthy', T, 6 * H, 2 * H, NOW)).toEqual({
      anchor: T - 30 * M,
      from: T - 30 * M,
      to: T + 2 * H,
      openStart: false,
      openEnd: true,
      worst: 'stopped',
    });
    expect(findIncident(stopped, 'healthy', T, 6 * H, 2 * H, T + 90 * M)).toMatchObject({
      to: T + 90 * M,
      openEnd: true,
    });
  });

  test('already bad when the search begins: the start is the bound, said open', () => {
    const moves = [move(20, 'resisting', 'healthy')];
    expect(findIncident(moves, 'resisting', T, 1 * H, 1 * H, NOW)).toEqual({
      anchor: T,
      from: T - H,
      to: T + 20 * M,
      openStart: true,
      openEnd: false,
      worst: 'resisting',
    });
  });

  test('a loop that starts learning, then healthy, then degrades: learning is calm', () => {
    const moves = [
      move(-100, null, 'learning'),
      move(-90, 'learning', 'healthy'),
      move(-10, 'healthy', 'degrading'),
      move(5, 'degrading', 'healthy'),
    ];
    expect(findIncident(moves, null, T, 6 * H, 6 * H, NOW)).toMatchObject({
      from: T - 10 * M,
      to: T + 5 * M,
      worst: 'degrading',
    });
  });

  test('no move into degrading or resisting in the range and a calm band at T: no incident', () => {
    expect(findIncident([], 'healthy', T, H, H, NOW)).toBeNull();
    expect(findIncident([], null, T, H, H, NOW)).toBeNull();
    // The incident is outside the search: the moves beyond the bound are not looked at.
    expect(
      findIncident([move(-200, 'healthy', 'degrading'), move(-190, 'degrading', 'healthy')], 'healthy', T, H, H, NOW),
    ).toBeNull();
  });
});

test('bandAt: the band after every move at or before the time', () => {
  const moves = [move(-10, 'healthy', 'degrading'), move(10, 'degrading', 'healthy')];
  expect(bandAt(moves, 'healthy', T - 11 * M)).toBe('healthy');
  expect(bandAt(moves, 'healthy', T - 10 * M)).toBe('degrading');
  expect(bandAt(moves, 'healthy', T)).toBe('degrading');
  expect(bandAt(moves, 'healthy', T + 10 * M)).toBe('healthy');
});
