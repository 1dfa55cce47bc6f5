import { parseSiteHealthInput, type SiteHealthConfig } from '../../../core/control/config';
import { askedChanges, diffSettings, formatMs, isGiven } from '../../../client/settings-diff';

function settings(input: Record<string, unknown>): SiteHealthConfig {
  const parsed = parseSiteHealthInput({ site: 'shop.example.com', ...input });
  if (!parsed.ok) throw new Error(parsed.message);
  const { carried: _carried, ...config } = parsed.value;
  return config;
}

describe('formatMs', () => {
  test.each([
    [60_000, '1m'],
    [30_000, '30s'],
    [90_000, '90s'],
    [3_600_000, '1h'],
    [14 * 86_400_000, '14d'],
    [1_500, '1500ms'],
    [0, '0ms'],
  ])('%d → %s', (ms, shown) => expect(formatMs(ms)).toBe(shown));
});

describe('diffSettings', () => {
  test('equal settings differ in nothing', () => {
    expect(diffSettings(settings({}), settings({}))).toEqual([]);
  });
  test('names each differing leaf by its path, durations shown as durations', () => {
    const changes = diffSettings(
      settings({ tickIntervalMs: 60_000 }),
      settings({ tickIntervalMs: 30_000, scoring: { smoothing: { halfLifeMs: 300_000 } } }),
    );
    expect(changes).toEqual([
      {
        path: 'scoring.smoothing.halfLifeMs',
        running: formatMs(settings({}).scoring.smoothing.halfLifeMs),
        wanted: '5m',
      },
      { path: 'tickIntervalMs', running: '1m', wanted: '30s' },
    ]);
  });
  test('the site is the identity of the loop, never a change', () => {
    const other = { ...settings({}), site: 'other.example.com' };
    expect(diffSettings(settings({}), other)).toEqual([]);
  });
});

describe('isGiven / askedChanges', () => {
  test('a path is given when its key, or an object or value above it, was typed', () => {
    expect(isGiven('tickIntervalMs', { tickIntervalMs: 1 })).toBe(true);
    expect(isGiven('tickIntervalMs', {})).toBe(false);
    expect(isGiven('scoring.smoothing.halfLifeMs', { scoring: { smoothing: { halfLifeMs: 1 } } })).toBe(true);
    expect(isGiven('scoring.smoothing.halfLifeMs', { scoring: { bands: {} } })).toBe(false);
    // A list is one setting: every index of it is given with it.
    expect(isGiven('scoring.weights', { scoring: { weights: {} } })).toBe(true);
  });
  test('defaults the user did not type are not asked for', () => {
    const running = settings({ tickIntervalMs: 30_000 });
    // `start shop.example.com` (no --tick) after `--tick 30s`: the default 1m is not a request.
    expect(askedChanges(running, settings({}), {})).toEqual([]);
    expect(askedChanges(running, settings({ tickIntervalMs: 120_000 }), { tickIntervalMs: 120_000 })).toEqual([
      { path: 'tickIntervalMs', running: '30s', wanted: '2m' },
    ]);
  });
});
