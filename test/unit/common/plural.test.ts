import { plural } from '../../../core/common/plural';

test('plural: singular for exactly one, plural for anything else, irregular nouns by hand', () => {
  expect(plural(1, 'tick')).toBe('1 tick');
  expect(plural(0, 'tick')).toBe('0 ticks');
  expect(plural(2, 'tick')).toBe('2 ticks');
  expect(plural(358, 'request')).toBe('358 requests');
  expect(plural(1, 'match', 'matches')).toBe('1 match');
  expect(plural(3, 'match', 'matches')).toBe('3 matches');
});
