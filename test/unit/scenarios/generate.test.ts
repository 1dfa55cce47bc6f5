/**
 * The scenario generator as the backtest and `simulate` use it: its catalogue, deterministic output
 * (same options, same bytes; no clock, no Math.random), its volumes, and bad options named. What each
 * scenario's events and truth hold is checked in realism.test.ts.
 */
import { createHash } from 'node:crypto';
import { generateScenario, listScenarios, SCENARIO_NAMES, ScenarioOptionsError } from '../../../core/scenarios';

const END = Date.UTC(2026, 10, 30, 12, 0);
const DAY = 86_400_000;

/** A hash of the events as NDJSON (of the first `limit` only, when given). */
function digest(
  name: string,
  options: Parameters<typeof generateScenario>[1],
  limit = Infinity,
): { hash: string; count: number } {
  const hash = createHash('sha256');
  let count = 0;
  for (const e of generateScenario(name, options).events) {
    if (count >= limit) break;
    hash.update(`${JSON.stringify(e)}\n`);
    count++;
  }
  return { hash: hash.digest('hex'), count };
}

test('the catalogue: fifteen scenarios, kebab-case names, one-line descriptions', () => {
  expect(SCENARIO_NAMES).toEqual(
    expect.arrayContaining([
      'gradual-hostility',
      'sudden-wall',
      'challenge-wave',
      'soft-blocks',
      'tarpit',
      'dead-pool',
      'dead-country',
      'redesign',
      'load-latency',
      'always-challenging',
      'diurnal',
      'bad-minute',
      'slow-creep',
      'low-traffic',
      'quiet',
    ]),
  );
  expect(new Set(SCENARIO_NAMES).size).toBe(SCENARIO_NAMES.length);
  for (const s of listScenarios()) {
    expect(s.name).toMatch(/^[a-z]+(?:-[a-z]+)*$/);
    expect(s.description).not.toMatch(/\n/);
    expect(s.description.length).toBeGreaterThan(20);
  }
});

test(
  'deterministic: the same options give the same events; another seed, end or site gives others; no clock or ' +
    'Math.random is read',
  () => {
    const now = jest.spyOn(Date, 'now').mockImplementation(() => {
      throw new Error('the generator read the clock');
    });
    const random = jest.spyOn(Math, 'random').mockImplementation(() => {
      throw new Error('the generator drew from Math.random');
    });
    try {
      const options = { days: 2, seed: 7, end: END };
      const first = digest('tarpit', options);
      expect(digest('tarpit', options)).toEqual(first);
      expect(first.count).toBeGreaterThan(50_000);
      // Each of these changes the traffic from its first events on.
      const head = digest('tarpit', options, 2_000).hash;
      expect(digest('tarpit', { ...options, seed: 8 }, 2_000).hash).not.toBe(head);
      expect(digest('tarpit', { ...options, end: END + 60_000 }, 2_000).hash).not.toBe(head);
      expect(digest('tarpit', { ...options, site: 'Other.Example.com' }, 2_000).hash).not.toBe(head);
      // The events iterable is lazy and can be walked again (each walk generates afresh).
      const scenario = generateScenario('low-traffic', options);
      const once = [...scenario.events];
      expect(once.length).toBeGreaterThan(1_000);
      expect([...scenario.events]).toEqual(once);
      expect(generateScenario('tarpit', options).truth).toEqual(generateScenario('tarpit', options).truth);
    } finally {
      now.mockRestore();
      random.mockRestore();
    }
  },
);

test(
  'volumes: ~40 requests a minute on the incident day, ~6 on history days (so a 15-day scenario is ~180,000 ' +
    'events); the low-traffic site under one a minute',
  () => {
    const perMinute = (name: string) => {
      const { events } = generateScenario(name, { days: 3, end: END });
      let history = 0;
      let incident = 0;
      for (const e of events) {
        if (Date.parse(e.ts as string) < END - DAY) history++;
        else incident++;
      }
      return { history: history / (2 * 1440), incident: incident / 1440 };
    };
    const quiet = perMinute('quiet');
    expect(quiet.history).toBeGreaterThan(5.5);
    expect(quiet.history).toBeLessThan(6.5);
    expect(quiet.incident).toBeGreaterThan(38);
    expect(quiet.incident).toBeLessThan(42);
    const low = perMinute('low-traffic');
    expect(low.history).toBeGreaterThan(0.3);
    expect(low.incident).toBeLessThan(1);
  },
);

test('history days have a daily shape: busiest mid-afternoon UTC, quietest in the small hours', () => {
  const byHour = new Array<number>(24).fill(0);
  for (const e of generateScenario('quiet', { days: 4, end: END }).events) {
    const ts = Date.parse(e.ts as string);
    if (ts < END - DAY) byHour[new Date(ts).getUTCHours()]!++;
  }
  const busiest = byHour.indexOf(Math.max(...byHour));
  const quietest = byHour.indexOf(Math.min(...byHour));
  expect(busiest).toBeGreaterThanOrEqual(12);
  expect(busiest).toBeLessThanOrEqual(18);
  expect(quietest).toBeLessThanOrEqual(6);
  const sum = (from: number, to: number) => byHour.slice(from, to).reduce((a, b) => a + b, 0);
  // 13:00–17:00 against 01:00–05:00: about 3× with the default swing.
  expect(sum(13, 17) / sum(1, 5)).toBeGreaterThan(2.5);
});

test('bad options are refused naming the option', () => {
  const fails = (name: string, options: Parameters<typeof generateScenario>[1]) => {
    try {
      generateScenario(name, options);
    } catch (err) {
      if (err instanceof ScenarioOptionsError) return `${err.field}: ${err.problem}`;
      throw err;
    }
    throw new Error('accepted');
  };
  expect(fails('nope', { end: END })).toMatch(/^scenario: unknown scenario "nope"; one of quiet, .*low-traffic$/);
  expect(fails('quiet', { end: END, days: 1 })).toMatch(/^days: must be a whole number of days from 2 to 29/);
  expect(fails('quiet', { end: END, days: 2.5 })).toMatch(/^days: /);
  expect(fails('quiet', { end: END, seed: -1 })).toMatch(/^seed: must be a whole number from 0 to 4294967295/);
  expect(fails('quiet', { end: END + 1 })).toMatch(/^end: must be a time on a whole minute/);
  expect(fails('quiet', { end: Date.UTC(2000, 0, 2) })).toMatch(
    /^end: must leave the whole scenario between 2000 and 2100/,
  );
  expect(fails('quiet', { end: END, site: 'not a host' })).toMatch(/^site: must be a host name/);
  // A site is normalised as the store would.
  expect(generateScenario('quiet', { end: END, days: 2, site: 'https://Shop.Example.com/x' }).truth.site).toBe(
    'shop.example.com',
  );
});
