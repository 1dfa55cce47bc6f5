/** Live reconfiguration, the pure part: the `configure` payload, the merge into the loop's settings, what changed. */
import { siteHealthConfigSchema } from '../../../core/control/config';
import { mergeSettings, parseSettingsChange, settingsChanges } from '../../../core/control/settings-change';
import { joinRegExp } from '../../kit/regexp';

const current = siteHealthConfigSchema().parse({
  site: 'shop.example.com',
  tickIntervalMs: 60_000,
  policy: { concurrency: { nominal: 8, floor: 2 } },
});

function refusal(payload: unknown): string {
  const r = parseSettingsChange(current, payload);
  if (r.ok) throw new Error('expected a refusal');
  return r.message;
}

describe('merge', () => {
  test('only the fields given change; nested objects are merged key by key', () => {
    const merged = mergeSettings({ a: 1, b: { c: 2, d: 3 }, e: [1, 2] }, { b: { d: 4 }, e: [3] });
    expect(merged).toEqual({ a: 1, b: { c: 2, d: 4 }, e: [3] });
  });

  test('a __proto__ key stays an own key (and pollutes nothing)', () => {
    const merged = mergeSettings({ a: 1 }, JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown>);
    expect(Object.hasOwn(merged, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
  });
});

describe('configure payloads', () => {
  test('a new tick and nominal keep every other setting', () => {
    const r = parseSettingsChange(current, {
      who: ' alice ',
      settings: { tickIntervalMs: 10_000, policy: { concurrency: { nominal: 12 } } },
    });
    if (!r.ok) throw new Error(r.message);
    expect(r.change).toMatchObject({ who: 'alice', why: null, owners: {} });
    expect(r.change.settings).toEqual({
      ...current,
      tickIntervalMs: 10_000,
      policy: { ...current.policy, concurrency: { ...current.policy.concurrency, nominal: 12 } },
    });
    expect(settingsChanges(current, r.change.settings)).toEqual([
      { field: 'tickIntervalMs', old: 60_000, new: 10_000 },
      { field: 'policy.concurrency.nominal', old: 8, new: 12 },
    ]);
  });

  test('owners alone are a change; the settings stay', () => {
    const r = parseSettingsChange(current, {
      who: 'alice',
      why: 'team moved',
      owner: 'crawl@example.com',
      parserOwner: 'parse@example.com',
    });
    if (!r.ok) throw new Error(r.message);
    expect(r.change).toEqual({
      who: 'alice',
      why: 'team moved',
      settings: current,
      owners: { owner: 'crawl@example.com', parserOwner: 'parse@example.com' },
    });
    expect(settingsChanges(current, r.change.settings)).toEqual([]);
  });

  test.each([
    ['not an object', 'tick 10s', /^configure: expected a JSON object like \{"who": /],
    ['no who', { settings: { tickIntervalMs: 10_000 } }, /^configure: who: required: who decides/],
    ['nothing to change', { who: 'alice' }, /^configure: nothing to change: give settings/],
    ['an empty settings object', { who: 'alice', settings: {} }, /^configure: nothing to change/],
    [
      'a tick below 1 s',
      { who: 'alice', settings: { tickIntervalMs: 500 } },
      joinRegExp(
        /^configure: settings\.tickIntervalMs: expected a tick /,
        /interval in milliseconds \(a whole number of at least 1000\)$/,
      ),
    ],
    [
      'a floor above the current nominal',
      { who: 'alice', settings: { policy: { concurrency: { floor: 9 } } } },
      /^configure: settings\.policy\.concurrency\.floor: must not exceed concurrency\.nominal \(8\)$/,
    ],
    ['an unknown setting', { who: 'alice', settings: { polcy: {} } }, /^configure: settings: unknown field "polcy"$/],
    [
      'the carried state',
      { who: 'alice', settings: { carried: {} } },
      /^configure: settings: unknown field "carried"$/,
    ],
    [
      'another site',
      { who: 'alice', settings: { site: 'other.example.com' } },
      /^configure: settings\.site: a loop's site cannot change/,
    ],
    [
      'an owner on two lines',
      { who: 'alice', owner: 'a@example.com\nb' },
      /^configure: owner: expected a contact on one line/,
    ],
    ['an unknown top-level field', { who: 'alice', tick: 5 }, /^configure: unknown field "tick"$/],
    [
      'settings as an array',
      { who: 'alice', settings: [1] },
      /^configure: settings: expected a JSON object of settings/,
    ],
  ])('%s is refused with one line naming the field', (_what, payload, message) => {
    const m = refusal(payload);
    expect(m).toMatch(message);
    expect(m).not.toContain('\n');
  });

  test('a long unknown key is echoed capped', () => {
    const m = refusal({ who: 'alice', settings: { ['k'.repeat(100_000)]: 1 } });
    expect(m.length).toBeLessThan(300);
  });
});
