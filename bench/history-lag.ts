/**
 * Tick lag from event histories (server timestamps, so the measure does not depend on the benchmark's
 * own clock or load): for every timer of the tick interval, the time from when it was due
 * (TimerStarted + interval) to
 *   - the workflow task that handled it starting (`wake`: Temporal's own cost — timer, queue, worker), and
 *   - the tick's assessment activity starting (`tick`: what the issue calls tick lag), for site loops.
 */
import { tsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';

const E = temporal.api.enums.v1.EventType;
type History = temporal.api.history.v1.IHistory;

export interface TickLag {
  dueAt: number;
  /** NaN: the timer was due but the workflow had not woken when the history was read. */
  wakeLagMs: number;
  tickLagMs: number | null;
  /** Timer fired → the next tick timer started: how long the tick itself took (site loops). */
  cycleMs: number | null;
  /** The assessment activity: scheduled → completed. */
  assessMs: number | null;
}

/** A protobuf Duration in ms (seconds may be a Long or a number). */
function ms(d: { seconds?: { toNumber(): number } | number | null; nanos?: number | null } | null | undefined): number {
  if (!d) return 0;
  const seconds = typeof d.seconds === 'number' ? d.seconds : (d.seconds?.toNumber() ?? 0);
  return seconds * 1000 + Math.round((d.nanos ?? 0) / 1e6);
}

export function tickLags(history: History, intervalMs: number): TickLag[] {
  const events = history.events ?? [];
  const timers = new Map<string, number>();
  const open = new Set<string>();
  const scheduledAt = new Map<string, number>();
  let lastFired: { lag: TickLag; at: number } | null = null;
  let assessing: TickLag | null = null;
  const scheduledType = new Map<string, string>();
  const out: TickLag[] = [];
  let pending: TickLag | null = null;
  for (const e of events) {
    const t = tsToMs(e.eventTime);
    const id = String(e.eventId);
    switch (e.eventType) {
      case E.EVENT_TYPE_TIMER_STARTED:
        if (ms(e.timerStartedEventAttributes?.startToFireTimeout) === intervalMs) {
          timers.set(id, t + intervalMs);
          open.add(id);
          if (lastFired) lastFired.lag.cycleMs = t - lastFired.at;
          lastFired = null;
        }
        break;
      case E.EVENT_TYPE_TIMER_CANCELED:
        open.delete(String(e.timerCanceledEventAttributes?.startedEventId));
        break;
      case E.EVENT_TYPE_TIMER_FIRED: {
        const started = String(e.timerFiredEventAttributes?.startedEventId);
        const due = timers.get(started);
        open.delete(started);
        if (due !== undefined) {
          pending = { dueAt: due, wakeLagMs: Number.NaN, tickLagMs: null, cycleMs: null, assessMs: null };
          lastFired = { lag: pending, at: t };
        }
        break;
      }
      case E.EVENT_TYPE_WORKFLOW_TASK_STARTED:
        if (pending && Number.isNaN(pending.wakeLagMs)) {
          pending.wakeLagMs = t - pending.dueAt;
          out.push(pending);
        }
        break;
      case E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
        scheduledType.set(id, e.activityTaskScheduledEventAttributes?.activityType?.name ?? '');
        scheduledAt.set(id, t);
        break;
      case E.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: {
        const sched = String(e.activityTaskCompletedEventAttributes?.scheduledEventId);
        if (assessing && scheduledType.get(sched) === 'assessSite') assessing.assessMs = t - (scheduledAt.get(sched) ?? t);
        assessing = null;
        break;
      }
      case E.EVENT_TYPE_ACTIVITY_TASK_STARTED:
        if (pending && pending.tickLagMs === null && scheduledType.get(String(e.activityTaskStartedEventAttributes?.scheduledEventId)) === 'assessSite') {
          pending.tickLagMs = t - pending.dueAt;
          assessing = pending;
          pending = null;
        }
        break;
      default:
        break;
    }
  }
  // Due but never woken (the worker stopped first, or the timer has not even fired).
  if (pending && Number.isNaN(pending.wakeLagMs)) out.push(pending);
  for (const id of open) out.push({ dueAt: timers.get(id)!, wakeLagMs: Number.NaN, tickLagMs: null, cycleMs: null, assessMs: null });
  return out;
}

/** The first workflow task of a run: scheduled → started (a loop's start-up, not a tick). */
export function firstTaskWaitMs(history: History): number {
  let scheduled: number | null = null;
  for (const e of history.events ?? []) {
    if (e.eventType === E.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED && scheduled === null) scheduled = tsToMs(e.eventTime);
    if (e.eventType === E.EVENT_TYPE_WORKFLOW_TASK_STARTED && scheduled !== null) return tsToMs(e.eventTime) - scheduled;
  }
  return 0;
}
