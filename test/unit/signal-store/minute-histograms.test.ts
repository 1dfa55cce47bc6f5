/** The current window's latency histogram: minute histograms (as PostgreSQL prints them) added up. */
import { sumMinuteHistograms } from '../../../server/db/signal-store/read-windows';

test('minute histograms of different lengths are added bucket by bucket', () => {
  expect(sumMinuteHistograms('{1,0,3};{0,2};{4}')).toEqual(['5', '2', '3']);
  expect(sumMinuteHistograms('{}')).toEqual([]);
});

test('a bucket past 2^53 - 1 is saturated, never rounded', () => {
  expect(sumMinuteHistograms('{9007199254740990,1};{1,1}')).toEqual(['9007199254740991', '2']);
  expect(sumMinuteHistograms('{9007199254740990,1};{5,1}')).toEqual([String(Number.MAX_SAFE_INTEGER), '2']);
});
