import { formatDuration } from '../../../core/common/durations';

describe('formatDuration: exact enough, one way everywhere', () => {
  test('a minute and a half is said as such, never rounded to 2 min', () => {
    expect(formatDuration(90_000)).toBe('1 min 30 s');
    expect(formatDuration(45_000)).toBe('45 s');
    expect(formatDuration(5 * 60_000)).toBe('5 min');
  });

  test('whole units alone, mixed units largest first, zero parts left out', () => {
    expect(formatDuration(3_600_000)).toBe('1 h');
    expect(formatDuration(125 * 60_000)).toBe('2 h 5 min');
    expect(formatDuration(86_400_000)).toBe('1 d');
    expect(formatDuration(86_400_000 + 3_600_000 + 1000)).toBe('1 d 1 h 1 s');
    expect(formatDuration(14 * 86_400_000)).toBe('14 d');
  });

  test('exact below a minute; to the second from a minute up', () => {
    expect(formatDuration(0)).toBe('0 s');
    expect(formatDuration(250)).toBe('250 ms');
    expect(formatDuration(1500)).toBe('1.5 s');
    expect(formatDuration(1234)).toBe('1.234 s');
    expect(formatDuration(60_000 + 499)).toBe('1 min');
    expect(formatDuration(60_000 + 500)).toBe('1 min 1 s');
  });

  test('negative with a minus sign', () => {
    expect(formatDuration(-125 * 60_000)).toBe('-2 h 5 min');
  });
});
