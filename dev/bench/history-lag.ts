/**
 * Tick lag from event histories (server timestamps, so the measure does not depend on the benchmark's
 * own clock or load): for every tick timer — one of the tick interval (the empty loops), or one the site
 * loop started to wait for its next slot on the tick schedule (core/control/schedule.ts: its summary says
 * "next tick at …", its duration is whatever is left to the slot) — the time from when it was due
 * (TimerStarted + its duration) to
 *   - the workflow task that handled it starting (`wake`: Temporal's own cost — timer, queue, worker), and
 *   - the tick's assessment activity starting (`tick`: what docs/operations.md calls tick lag), for site loops.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import { tsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { localActivityMarker } from '../../loop/local-activity-marker';

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

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** The summary the workflow gave a timer (user metadata), if any. */
function timerSummary(e: HistoryEvent): string | undefined {
  const payload = e.userMetadata?.summary;
  if (!payload) return undefined;
  try {
    const value: unknown = defaultPayloadConverter.fromPayload(payload);
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** A timer that waits for a tick: the interval itself, or the site loop's wait for its next slot. */
function tickTimerMs(e: HistoryEvent, intervalMs: number): number | null {
  const duration = ms(e.timerStartedEventAttributes?.startToFireTimeout);
  if (duration === intervalMs) return duration;
  return timerSummary(e)?.startsWith('next tick') === true ? duration : null;
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
      case E.EVENT_TYPE_TIMER_STARTED: {
        const duration = tickTimerMs(e, intervalMs);
        if (duration !== null) {
          timers.set(id, t + duration);
          open.add(id);
          if (lastFired) lastFired.lag.cycleMs = t - lastFired.at;
          lastFired = null;
        }
        break;
      }
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
        if (assessing && scheduledType.get(sched) === 'assessSite')
          assessing.assessMs = t - (scheduledAt.get(sched) ?? t);
        assessing = null;
        break;
      }
      case E.EVENT_TYPE_ACTIVITY_TASK_STARTED:
        if (
          pending &&
          pending.tickLagMs === null &&
          scheduledType.get(String(e.activityTaskStartedEventAttributes?.scheduledEventId)) === 'assessSite'
        ) {
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
  for (const id of open)
    out.push({ dueAt: timers.get(id)!, wakeLagMs: Number.NaN, tickLagMs: null, cycleMs: null, assessMs: null });
  return out;
}

/**
 * The first workflow task of a run: scheduled → started (a loop's start-up, not a tick). One that had
 * not started when the worker stopped (`stoppedAt`) counts with its wait so far, not as no wait.
 */
export function firstTaskWaitMs(history: History, stoppedAt: number): number {
  let scheduled: number | null = null;
  for (const e of history.events ?? []) {
    if (e.eventType === E.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED && scheduled === null) scheduled = tsToMs(e.eventTime);
    if (e.eventType === E.EVENT_TYPE_WORKFLOW_TASK_STARTED && scheduled !== null)
      return tsToMs(e.eventTime) - scheduled;
  }
  return scheduled === null ? 0 : Math.max(0, stoppedAt - scheduled);
}

/**
 * A site loop's ticks, read from its assessments: each one carries the slot it assesses (`asOf`, the
 * tick schedule's slot: the regular activity's input, or the local activity's result, whose
 * `assessedAt` is the `asOf` it was given), so the lag needs no timer at all — a loop that is late
 * enough to skip to a later slot (core/control/schedule.ts) simply has fewer ticks, which the caller counts
 * against the ticks due. Due = slot + the site's phase (`phase`, 0 for unphased loops). Wake = due → the
 * workflow task that ran (local) or scheduled (regular) the assessment started; tick = due → the
 * assessment started (for a local one: the same workflow task, which runs it first thing).
 */
export function siteTickLags(history: History, phase = 0): TickLag[] {
  return siteTicks(history, phase).map(({ scheduledAt: _scheduledAt, ...lag }) => lag);
}

/** Slots of a loop's tick schedule due in [from, to): its slots are `phase + k × interval`. */
export function slotsDue(anyDueAt: number, intervalMs: number, from: number, to: number): number {
  const phase = ((anyDueAt % intervalMs) + intervalMs) % intervalMs;
  const first = Math.ceil((from - phase) / intervalMs);
  const last = Math.ceil((to - phase) / intervalMs);
  return Math.max(0, last - first);
}

function siteTicks(history: History, phase: number): Array<TickLag & { scheduledAt: number }> {
  const events = history.events ?? [];
  const startedAt = new Map<string, number>();
  const completedToStarted = new Map<string, string>();
  const byScheduled = new Map<string, TickLag & { scheduledAt: number }>();
  const out: Array<TickLag & { scheduledAt: number }> = [];
  const taskStarted = (completedEventId: unknown): number | undefined =>
    startedAt.get(completedToStarted.get(String(completedEventId)) ?? '');
  for (const e of events) {
    const t = tsToMs(e.eventTime);
    const id = String(e.eventId);
    switch (e.eventType) {
      case E.EVENT_TYPE_WORKFLOW_TASK_STARTED:
        startedAt.set(id, t);
        break;
      case E.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
        completedToStarted.set(id, String(e.workflowTaskCompletedEventAttributes?.startedEventId));
        break;
      case E.EVENT_TYPE_MARKER_RECORDED: {
        const m = localActivityMarker(e);
        if (m === null || m.activityType !== 'assessSite' || m.failed) break;
        const asOf = (m.result as { assessedAt?: string } | null)?.assessedAt;
        if (asOf === undefined) break;
        const dueAt = Date.parse(asOf) + phase;
        const wfStarted = taskStarted(e.markerRecordedEventAttributes?.workflowTaskCompletedEventId);
        const wake = wfStarted === undefined ? Number.NaN : wfStarted - dueAt;
        out.push({
          dueAt,
          wakeLagMs: wake,
          tickLagMs: Number.isNaN(wake) ? null : wake,
          cycleMs: null,
          assessMs: wfStarted === undefined || m.completedAt === null ? null : m.completedAt - wfStarted,
          scheduledAt: t,
        });
        break;
      }
      case E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED: {
        const a = e.activityTaskScheduledEventAttributes;
        if (a?.activityType?.name !== 'assessSite') break;
        const input = a.input?.payloads?.[0];
        const asOf = input ? defaultPayloadConverter.fromPayload<{ asOf?: string }>(input).asOf : undefined;
        if (asOf === undefined) break;
        const dueAt = Date.parse(asOf) + phase;
        const wfStarted = taskStarted(a.workflowTaskCompletedEventId);
        const lag = {
          dueAt,
          wakeLagMs: wfStarted === undefined ? Number.NaN : wfStarted - dueAt,
          tickLagMs: null,
          cycleMs: null,
          assessMs: null,
          scheduledAt: t,
        };
        byScheduled.set(id, lag);
        out.push(lag);
        break;
      }
      case E.EVENT_TYPE_ACTIVITY_TASK_STARTED: {
        const lag = byScheduled.get(String(e.activityTaskStartedEventAttributes?.scheduledEventId));
        if (lag && lag.tickLagMs === null) lag.tickLagMs = t - lag.dueAt;
        break;
      }
      case E.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: {
        const lag = byScheduled.get(String(e.activityTaskCompletedEventAttributes?.scheduledEventId));
        if (lag) lag.assessMs = t - lag.scheduledAt;
        break;
      }
      default:
        break;
    }
  }
  return out;
}
