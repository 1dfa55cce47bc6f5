import { planTick } from '../../../core/control/plan';
import { initialLoopState, loopStateSchema } from '../../../core/control/loop-state';
import { parseSiteHealthInput } from '../../../core/control/config';
import { CONFIG, tickAssessment, window } from '../../kit/loop-fixtures';

describe('siteHealth input', () => {
  test('a site alone gets the product defaults', () => {
    const parsed = parseSiteHealthInput({ site: 'shop.example.com' });
    expect(parsed.ok && parsed.value).toMatchObject({
      site: 'shop.example.com',
      tickIntervalMs: 60_000,
      maxTicksPerRun: 1_000,
      window: { currentWindowMs: 900_000, baselineMs: 14 * 86_400_000, excludeRecentMs: 86_400_000 },
      scoring: { smoothing: { halfLifeMs: 600_000 }, bands: { healthyMin: 80, degradingMin: 50, hysteresis: 3 } },
      policy: {
        concurrency: { nominal: 16, floor: 1, decreaseFactor: 0.75, increaseStep: 2 },
        revisit: { max: 8, increaseFactor: 1.5, decreaseStep: 0.5 },
        reminderIntervalMs: 14_400_000,
        parserAlertBelow: 80,
      },
      timeouts: { activityMs: 30_000 },
    });
  });

  test.each([
    [{ site: 'Shop.Example.com' }, 'site: must be the normalised host "shop.example.com"'],
    [{ site: 'localhost' }, expect.stringMatching(/^site: /)],
    [
      { site: 'shop.example.com', tickIntervalMs: 500 },
      'tickIntervalMs: expected a tick interval in milliseconds (a whole number of at least 1000)',
    ],
    [
      { site: 'shop.example.com', policy: { concurrency: { nominal: 4, floor: 8 } } },
      'policy.concurrency.floor: must not exceed concurrency.nominal (4)',
    ],
    [
      { site: 'shop.example.com', policy: { concurrency: { decreaseFactor: 1 } } },
      'policy.concurrency.decreaseFactor: expected a number between 0 and 1 (exclusive)',
    ],
    [
      { site: 'shop.example.com', scoring: { bands: { healthyMin: 40 } } },
      'scoring.bands: degradingMin (50) must be below healthyMin (40); scoring.bands.hysteresis: must be less ' +
        'than half the width of the degrading band',
    ],
    [{ site: 'shop.example.com', polcy: {} }, 'unknown field "polcy"'],
  ])('%j is refused naming the field', (input, message) => {
    const parsed = parseSiteHealthInput(input);
    expect(parsed).toEqual({ ok: false, message });
  });

  test('the state a continued run carries round-trips through the input schema', () => {
    let state = initialLoopState('chain');
    for (let tick = 1; tick <= 3; tick++)
      state = planTick(state, tickAssessment(tick, window(400, { hard: tick === 3 ? 0.9 : 0 })), CONFIG).state;
    const carried = JSON.parse(JSON.stringify(state)) as unknown;
    const parsed = parseSiteHealthInput({ site: 'shop.example.com', carried });
    expect(parsed.ok && parsed.value.carried).toEqual(state);
    expect(loopStateSchema().safeParse({ ...state, tick: -1 }).success).toBe(false);
  });
});
