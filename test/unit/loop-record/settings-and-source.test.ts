/**
 * The pure parts of reading a period the live loop did not tick over: the settings before the first recorded
 * change (its old values put back), and the line that says a review, history or explanation is a replay's.
 */
import { revertChanges } from '../../../client/loop-record/settings-in-force';
import { type RecordSource, sourceLine } from '../../../client/loop-record/source';

describe('revertChanges', () => {
  const after = { tickIntervalMs: 10_000, scoring: { bands: { healthyMin: 85, resistingMax: 50 } }, site: 'a.example' };

  test('puts back the old value of each changed settings path and leaves the rest', () => {
    const before = revertChanges(after, [
      { field: 'tickIntervalMs', old: 60_000, new: 10_000 },
      { field: 'scoring.bands.healthyMin', old: 80, new: 85 },
    ]);
    expect(before).toEqual({
      tickIntervalMs: 60_000,
      scoring: { bands: { healthyMin: 80, resistingMax: 50 } },
      site: 'a.example',
    });
    // The stored row is not changed.
    expect(after.tickIntervalMs).toBe(10_000);
  });

  test('owners are not settings: a change of them is skipped', () => {
    expect(revertChanges(after, [{ field: 'owner', old: 'a@x', new: 'b@x' }])).toEqual(after);
  });
});

describe('sourceLine', () => {
  test('stored ticks say nothing', () => {
    expect(sourceLine({ kind: 'stored' })).toBeNull();
  });

  test('a replay says why, with which settings, from when, the decisions it applied and the command', () => {
    const s: RecordSource = {
      kind: 'replayed',
      why: 'no live ticks in the period',
      settingsFrom: 'the settings in force then (configure of 2026-11-24T09:00:00.000Z by alice)',
      tickMs: 90_000,
      from: '2026-11-24T08:00:00.000Z',
      to: '2026-11-24T14:00:00.000Z',
      decisions: 1,
      settingsChangedDuring: ['configure of 2026-11-24T12:00:00.000Z by bob'],
      command:
        'target-health replay a.example --from 2026-11-24T08:00:00.000Z --to 2026-11-24T14:00:00.000Z --tick 90s',
    };
    expect(sourceLine(s)).toBe(
      'replayed (no live ticks in the period): the loop as it would have run with the settings in force then ' +
        '(configure of 2026-11-24T09:00:00.000Z by alice), a tick every 1 min 30 s from 2026-11-24T08:00:00.000Z ' +
        '(warm-up included) to 2026-11-24T14:00:00.000Z, 1 stored decision applied at its time; settings ' +
        'changed during it (configure of 2026-11-24T12:00:00.000Z by bob), the replay keeps these; `target-health ' +
        'replay a.example --from 2026-11-24T08:00:00.000Z --to 2026-11-24T14:00:00.000Z --tick 90s` gives the ' +
        'same ticks',
    );
  });
});
