/** bench:sites counts a site loop's ticks due in the measured window from its schedule's slots. */
import { temporal } from '@temporalio/proto';
import { msToTs } from '@temporalio/common/lib/time';
import { firstTaskWaitMs, slotsDue } from '../../dev/bench/history-lag';

test('slots phase + k × interval inside [from, to)', () => {
  // Slots at 5, 15, 25, 35, …
  expect(slotsDue(25, 10, 0, 30)).toBe(3); // 5, 15, 25
  expect(slotsDue(5, 10, 5, 35)).toBe(3); // 5, 15, 25 (35 excluded)
  expect(slotsDue(5, 10, 6, 15)).toBe(0);
  expect(slotsDue(5, 10, 6, 16)).toBe(1);
  expect(slotsDue(1_796_000_005_000, 60_000, 1_796_000_000_000, 1_796_000_120_000)).toBe(2);
  expect(slotsDue(5, 10, 30, 20)).toBe(0);
});

test('a first workflow task not started by the end counts with its wait so far, not as no wait', () => {
  const { EventType } = temporal.api.enums.v1;
  const at = (ms: number) => msToTs(ms);
  const scheduled = { eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, eventTime: at(10_000) };
  const started = { eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED, eventTime: at(12_500) };
  expect(firstTaskWaitMs({ events: [scheduled, started] }, 90_000)).toBe(2_500);
  expect(firstTaskWaitMs({ events: [scheduled] }, 90_000)).toBe(80_000);
  expect(firstTaskWaitMs({ events: [] }, 90_000)).toBe(0);
});
