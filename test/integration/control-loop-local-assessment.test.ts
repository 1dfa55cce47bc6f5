/**
 * The cheaper tick (patches `local-assessment` and `tick-phase`), on the real dev server and PostgreSQL:
 *   - a steady, healthy site's tick is one workflow task: the timer fires, the assessment runs as a local
 *     activity inside that task (a marker in the history, no activity task on the server), nothing else;
 *   - the loop wakes at its site's phase after each slot, and the assessment keeps the slot as its time;
 *   - a tick whose local attempts fail (the assessments table held longer than their budget) falls back
 *     to the regular activity, which the server retries until it is done: the tick assessed once.
 */
import { temporal } from '@temporalio/proto';
import { tsToMs } from '@temporalio/common/lib/time';
import { workflowIdForSite } from '../../core/common/names';
import { type SiteHealthSummary, stateQuery, stopUpdate } from '../../loop/messages';
import { phaseMs } from '../../core/control/schedule';
import { localActivityMarker } from '../../loop/local-activity-marker';
import type { TickAssessment } from '../../core/control/tick-assessment';
import { ingestNow, loopInput, prepareSite, startHealthySite, waitForState } from '../kit/control-loop';
import { chainHistories, checkLoop, historyFacts } from '../kit/fault-checks';
import { createTestWorker, eventually, openHarness, type TestHarness } from '../kit/services';

const E = temporal.api.enums.v1.EventType;

let h: TestHarness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => h.close());

test(
  'a steady tick is one workflow task: the assessment is a local activity, woken at the site phase, asOf on the ' +
    'slot',
  async () => {
    const site = await prepareSite(h.pool, 'local');
    await ingestNow(h.pool, site, { ok: 100 });
    const input = loopInput(site, { tickIntervalMs: 2_000 });
    const { worker, connection } = await createTestWorker(h);
    const { summary, chainId } = await worker.runUntil(async () => {
      const { handle, healthy } = await startHealthySite(h.client, h.taskQueue, input);
      await waitForState(handle, 'six steady ticks', (s) => s.tick >= healthy.tick + 6);
      await handle.executeUpdate(stopUpdate, { args: [{ who: 'tests@example.com', why: 'done' }] });
      return { summary: (await handle.result()) as SiteHealthSummary, chainId: healthy.chainId };
    });
    await connection.close();

    const runs = await chainHistories(h.client, workflowIdForSite(site), chainId);
    const events = runs.flatMap((r) => r.events);
    const facts = historyFacts(runs);
    // Every tick assessed once, all of them locally: no activity task for an assessment.
    expect(facts.localAssessments).toBe(summary.ticks);
    expect(facts.assessmentFallbacks).toBe(0);
    expect(events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'assessSite')).toEqual(
      [],
    );

    // Ticks after the site settled (no control change, no notice): between one tick timer firing and the
    // next, one workflow task carries the tick's commands (the assessment's marker, the next timer). A
    // window may hold more tasks only when the machine was too slow for one: the SDK keeps a slow local
    // activity alive with command-less heartbeat tasks, and a timed-out task is retried. Any other extra
    // task, or any command besides the marker and the timer, is the loop doing more per tick.
    const phase = phaseMs(site, input.tickIntervalMs!);
    const windows: temporal.api.history.v1.IHistoryEvent[][] = [];
    let current: temporal.api.history.v1.IHistoryEvent[] | null = null;
    const wakeAfterSlot: number[] = [];
    for (const e of events) {
      if (e.eventType === E.EVENT_TYPE_TIMER_FIRED) {
        if (current !== null) windows.push(current);
        current = [];
      } else if (e.eventType === E.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED)
        current = null; // the stop
      else if (current !== null) current.push(e);
      const m = localActivityMarker(e);
      if (m !== null && m.activityType === 'assessSite' && !m.failed) {
        const slot = Date.parse((m.result as TickAssessment).assessedAt);
        expect(slot % input.tickIntervalMs!).toBe(0);
        wakeAfterSlot.push(tsToMs(e.eventTime) - slot);
      }
    }
    const steady = windows.slice(-4).map(describeTickWindow);
    expect(steady).toHaveLength(4);
    for (const w of steady) {
      expect({ commands: w.commands, commandTasks: w.commandTasks }).toEqual({
        commands: ['MARKER_RECORDED', 'TIMER_STARTED'],
        commandTasks: 1,
      });
      if (w.tasks > 1)
        expect({ extraTasks: w.tasks - 1, slowOrRetried: w.slowOrRetried, window: w.events }).toMatchObject({
          slowOrRetried: true,
        });
    }
    // The loop woke at its phase after the slot (never before it: the marker is recorded after the wake).
    for (const ms of wakeAfterSlot.slice(1)) expect(ms).toBeGreaterThanOrEqual(phase);
  },
  120_000,
);

/**
 * What one tick's window of history holds: its tasks, which of them carried commands, and whether the machine was slow.
 */
function describeTickWindow(window: temporal.api.history.v1.IHistoryEvent[]): {
  tasks: number;
  commandTasks: number;
  commands: string[];
  slowOrRetried: boolean;
  events: string[];
} {
  const name = (e: temporal.api.history.v1.IHistoryEvent) =>
    (E[e.eventType ?? 0] ?? String(e.eventType)).replace('EVENT_TYPE_', '');
  const isTaskEvent = (e: temporal.api.history.v1.IHistoryEvent) => name(e).startsWith('WORKFLOW_TASK_');
  let tasks = 0;
  let commandTasks = 0;
  let inCompletedTask = false;
  let taskHasCommands = false;
  let slowOrRetried = false;
  let firstStart: number | null = null;
  const commands: string[] = [];
  for (const e of window) {
    if (e.eventType === E.EVENT_TYPE_WORKFLOW_TASK_STARTED) firstStart ??= tsToMs(e.eventTime);
    if (e.eventType === E.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT || e.eventType === E.EVENT_TYPE_WORKFLOW_TASK_FAILED)
      slowOrRetried = true;
    if (e.eventType === E.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) {
      tasks += 1;
      inCompletedTask = true;
      taskHasCommands = false;
      // A task open for 4 s or more: past any normal tick, close to the SDK's heartbeat point (80 % of 10 s).
      if (firstStart !== null && tsToMs(e.eventTime) - firstStart >= 4_000) slowOrRetried = true;
    } else if (isTaskEvent(e)) inCompletedTask = false;
    else {
      if (inCompletedTask && !taskHasCommands) commandTasks += 1;
      taskHasCommands = true;
      commands.push(name(e));
    }
  }
  return { tasks, commandTasks, commands, slowOrRetried, events: window.map(name) };
}

test(
  'local attempts that fail fall back to the regular activity: ' + 'the tick assessed once, the loop carries on',
  async () => {
    const site = await prepareSite(h.pool, 'fallback');
    await ingestNow(h.pool, site, { ok: 100 });
    // 2 s activity timeouts: the local attempts' budget is 3 s; the table is held until the fallback is pending.
    const input = loopInput(site, { timeouts: { activityMs: 2_000 } });
    const { worker, connection } = await createTestWorker(h);
    const { summary, chainId } = await worker.runUntil(async () => {
      const { handle, healthy } = await startHealthySite(h.client, h.taskQueue, input);
      const locker = await h.pool.connect();
      let heldTick: number;
      try {
        await locker.query('BEGIN');
        await locker.query('LOCK TABLE assessments IN EXCLUSIVE MODE');
        await eventually(
          async () => {
            const d = await handle.describe();
            return (d.raw.pendingActivities ?? []).some((a) => a.activityType?.name === 'assessSite')
              ? true
              : undefined;
          },
          'the tick retried as a regular activity',
          60_000,
        );
        heldTick = (await handle.query(stateQuery)).tick + 1;
      } finally {
        await locker.query('COMMIT');
        locker.release();
      }
      await waitForState(handle, 'two ticks past the held one', (s) => s.tick >= heldTick + 2);
      await handle.executeUpdate(stopUpdate, { args: [{ who: 'tests@example.com', why: 'done' }] });
      return { summary: (await handle.result()) as SiteHealthSummary, chainId: healthy.chainId };
    });
    await connection.close();
    const check = await checkLoop({
      client: h.client,
      pool: h.pool,
      site,
      workflowId: workflowIdForSite(site),
      chainId,
      ticks: summary.ticks,
    });
    expect(check.facts.assessmentFallbacks).toBeGreaterThanOrEqual(1);
    expect(check.figures.ticksDoubled).toBe(0);
    expect(check.figures.ticksMissing).toBe(0);
    expect(summary.outcome).toBe('stopped');
  },
  180_000,
);
