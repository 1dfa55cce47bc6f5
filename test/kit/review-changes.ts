/** Control changes built by hand for the review's unit tests: minutes from 2026-11-24 12:00Z, nominal controls. */
import type { Controls } from '../../core/control/controls';
import type { ControlChange } from '../../server/db/history';
import { NOMINAL_CONTROLS } from './controls';

export const M = 60_000;
export const T0 = Date.parse('2026-11-24T12:00:00Z');
export const NOMINAL: Controls = { ...NOMINAL_CONTROLS, reason: 'healthy' };

/** The loop's change at `minute` from `before` to `after` (`o` overrides, e.g. a person's decision). */
export const change = (
  minute: number,
  before: Controls,
  after: Controls,
  o: Partial<ControlChange> = {},
): ControlChange => ({
  at: new Date(T0 + minute * M),
  changedAt: new Date(T0 + minute * M),
  actor: 'control-loop',
  reason: after.reason,
  oldControls: before,
  newControls: { ...after, version: 1 },
  assessmentKey: `k${minute}`,
  decisionKey: null,
  ...o,
});
