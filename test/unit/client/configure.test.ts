/**
 * `target-health configure`, the pure part: flags → the update's payload, refusals in the flags' terms, the answer
 * printed.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configurePayload, formatConfigured, refusalAsFlags } from '../../../client/commands/configure';

const noLogin = (): undefined => undefined;

describe('flags → payload', () => {
  test('--tick becomes tickIntervalMs and overrides the file; owners as given', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'configure-')), 'settings.json');
    writeFileSync(file, JSON.stringify({ tickIntervalMs: 5_000, policy: { concurrency: { nominal: 4 } } }));
    expect(configurePayload({ tick: '30s', config: file, owner: 'crawl@example.com', who: 'alice' }, noLogin)).toEqual({
      who: 'alice',
      settings: { tickIntervalMs: 30_000, policy: { concurrency: { nominal: 4 } } },
      owner: 'crawl@example.com',
    });
  });

  test('who defaults to the login name', () => {
    expect(configurePayload({ tick: '1m' }, () => 'bob')).toEqual({ who: 'bob', settings: { tickIntervalMs: 60_000 } });
  });

  test.each([
    [{}, 'configure: nothing to change: give --tick, --owner, --parser-owner or --config <file.json>'],
    [{ tick: 'soon', who: 'a' }, '--tick: "soon" is not a duration; use e.g. 30s, 5m, 1h'],
    [{ tick: '1m' }, '--who: required (no login name to default to), e.g. --who alice@example.com'],
    [{ owner: ' ', who: 'a' }, '--owner: expected a contact on one line, e.g. "crawl-team@example.com"'],
    [{ tick: '1m', who: 'a\tb' }, '--who: must be one line: no tab, line break or other control character'],
  ])('%j is refused: %s', (options, message) => {
    expect(() => configurePayload(options, noLogin)).toThrow(message);
  });
});

describe('the workflow refusal in the flags’ terms', () => {
  test.each([
    [
      'configure: settings.tickIntervalMs: expected a tick interval in milliseconds (a whole number of at least 1000)',
      { tick: '500ms' },
      '--tick 500ms: expected a tick interval in milliseconds (a whole number of at least 1000)',
    ],
    [
      'configure: settings.policy.concurrency.floor: must not exceed concurrency.nominal (8)',
      { config: 'c.json' },
      '--config c.json: policy.concurrency.floor: must not exceed concurrency.nominal (8)',
    ],
    ['configure: settings: unknown field "polcy"', { config: 'c.json' }, '--config c.json: unknown field "polcy"'],
    [
      'configure: settings.tickIntervalMs: expected …',
      { config: 'c.json' },
      '--config c.json: tickIntervalMs: expected …',
    ],
    ['configure: parserOwner: expected a contact', {}, '--parser-owner: expected a contact'],
    [
      'configure: shop.example.com is stopping; its loop takes no new settings',
      {},
      'configure: shop.example.com is stopping; its loop takes no new settings',
    ],
  ])('%s', (message, options, expected) => {
    expect(refusalAsFlags(message, options)).toBe(expected);
  });
});

test('the answer lists old → new, durations readable', () => {
  const text = formatConfigured(
    {
      site: 'shop.example.com',
      changeKey: 'shop.example.com/c/settings/1',
      changedAt: '2026-01-01T00:00:00.000Z',
      changes: [
        { field: 'tickIntervalMs', old: 60_000, new: 10_000 },
        { field: 'owner', old: null, new: 'crawl@example.com' },
      ],
      tickIntervalMs: 10_000,
      nextTickAt: '2026-01-01T00:00:10.000Z',
      message: '2 settings of shop.example.com changed by alice',
    },
    'http://ui',
  );
  expect(text).toBe(
    [
      '2 settings of shop.example.com changed by alice at 2026-01-01T00:00:00.000Z (change ' +
        'shop.example.com/c/settings/1):',
      '  tickIntervalMs  1m → 10s',
      '  owner           — → crawl@example.com',
      'in force from the next tick (2026-01-01T00:00:10.000Z); tick every 10s',
      'http://ui',
      '',
    ].join('\n'),
  );
});
