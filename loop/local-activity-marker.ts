/**
 * Reads the marker the core SDK records for a local activity (`core_local_activity`) in a workflow
 * history: its metadata (activity type, attempt, completion time on the worker's clock) and, when it
 * succeeded, its result. The fault checks and the sites benchmark read the loop's local assessments
 * through it: a local activity has no ActivityTaskScheduled event.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

const E = temporal.api.enums.v1.EventType;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** The core SDK's local-activity marker: its metadata (`data`) and, when it succeeded, its result. */
export interface LocalActivityMarker {
  activityType: string;
  attempt: number;
  /** Worker clock, epoch ms. */
  completedAt: number | null;
  result: unknown;
  failed: boolean;
}

const LOCAL_ACTIVITY_MARKER = 'core_local_activity';

export function localActivityMarker(e: HistoryEvent): LocalActivityMarker | null {
  const a = e.markerRecordedEventAttributes;
  if (e.eventType !== E.EVENT_TYPE_MARKER_RECORDED || a?.markerName !== LOCAL_ACTIVITY_MARKER) return null;
  const dataPayload = a.details?.data?.payloads?.[0];
  if (!dataPayload) return null;
  const data = defaultPayloadConverter.fromPayload<{
    activity_type?: string;
    attempt?: number;
    complete_time?: { seconds?: number; nanos?: number } | null;
  }>(dataPayload);
  const resultPayload = a.details?.result?.payloads?.[0];
  const ct = data.complete_time;
  return {
    activityType: data.activity_type ?? '',
    attempt: data.attempt ?? 1,
    completedAt: ct ? (ct.seconds ?? 0) * 1000 + Math.round((ct.nanos ?? 0) / 1e6) : null,
    result: resultPayload ? defaultPayloadConverter.fromPayload<unknown>(resultPayload) : null,
    failed: a.failure !== null && a.failure !== undefined,
  };
}
