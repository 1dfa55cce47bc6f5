/**
 * What a fault test asserts after the fault, read from the database and from the workflow histories
 * (every run of the loop's chain, followed through continue-as-new): every tick assessed exactly once,
 * no control change applied twice or lost, the audit consistent with the controls, each decision and
 * notification stored once, no workflow task failure — and the figures printed at the end.
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { ApplyActionsInput } from '../../activities/apply-actions';
import type { AssessSiteInput } from '../../activities/assess-site';
import type { TickAssessment } from '../../core/control/tick-assessment';
import { localActivityMarker } from '../../loop/local-activity-marker';
import { controlAudit, readControls, type AuditRow } from '../../server/db/controls';
import { listDecisions } from '../../server/db/decisions';
import type { Pool } from '../../server/db/pool';
import { type SiteHealthState, stateQuery } from '../../loop/messages';
import { until } from './fault-stack';

const E = temporal.api.enums.v1.EventType;
const CAUSE = temporal.api.enums.v1.WorkflowTaskFailedCause;
type History = temporal.api.history.v1.IHistory;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

export interface ChainRun {
  runId: string;
  events: HistoryEvent[];
}

/** Every run of a workflow chain, oldest first: from the first run, following each continue-as-new. */
export async function chainHistories(client: Client, workflowId: string, firstRunId: string): Promise<ChainRun[]> {
  const runs: ChainRun[] = [];
  for (let runId: string | undefined = firstRunId; runId;) {
    const history: History = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const events = history.events ?? [];
    runs.push({ runId, events });
    const last = events[events.length - 1];
    runId =
      last?.eventType === E.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW
        ? (last.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined)
        : undefined;
    if (runs.length > 1000) throw new Error(`${workflowId}: more than 1000 runs in the chain`);
  }
  return runs;
}

export interface WorkflowTaskFailure {
  runId: string;
  eventId: string;
  cause: string;
  message: string;
}

export interface HistoryFacts {
  runs: number;
  /**
   * Tick → how often an assessment of it was made: a local one recorded, or a regular one scheduled (a
   * tick whose local attempts failed) — once, or the workflow repeated a tick.
   */
  assessTicks: Map<number, number>;
  /** Ticks assessed by the local activity, and ticks that fell back to the regular activity after it failed. */
  localAssessments: number;
  assessmentFallbacks: number;
  /** Action keys of every applyActions scheduled with a controls change, in order. */
  controlActionKeys: string[];
  decisionKeys: string[];
  noticeKeys: string[];
  workflowTaskFailures: WorkflowTaskFailure[];
  /**
   * Tasks the server refused because they closed the run (continue-as-new) while a new event had
   * arrived (a detached delivery workflow completing, a signal): UNHANDLED_COMMAND. A race no workflow
   * code can prevent, resolved by the server — it schedules a new task with the event and the run
   * closes on that one (the Temporal UI does not flag these). Counted, not failures.
   */
  closeRaces: number;
  workflowTaskTimeouts: number;
  /** Activity attempts beyond the first (a crashed worker's, a database outage's), from ActivityTaskStarted. */
  activityRetries: number;
  /** Each run's history ends in a completed workflow task (or the run's close): nothing left failing. */
  endsClean: boolean;
}

function activityInput<T>(e: HistoryEvent): T {
  const payload = e.activityTaskScheduledEventAttributes?.input?.payloads?.[0];
  if (!payload) throw new Error(`activity scheduled at event ${String(e.eventId)} has no input`);
  return defaultPayloadConverter.fromPayload<T>(payload);
}

const CLOSING = new Set<number>([
  E.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
  E.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW,
  E.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED,
  E.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
  E.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED,
]);

export function historyFacts(runs: readonly ChainRun[]): HistoryFacts {
  const facts: HistoryFacts = {
    runs: runs.length,
    assessTicks: new Map(),
    localAssessments: 0,
    assessmentFallbacks: 0,
    controlActionKeys: [],
    decisionKeys: [],
    noticeKeys: [],
    workflowTaskFailures: [],
    closeRaces: 0,
    workflowTaskTimeouts: 0,
    activityRetries: 0,
    endsClean: true,
  };
  for (const run of runs) {
    let lastTaskOutcome: number | undefined;
    for (const e of run.events) {
      switch (e.eventType) {
        case E.EVENT_TYPE_MARKER_RECORDED: {
          const m = localActivityMarker(e);
          if (m === null || m.activityType !== 'assessSite') break;
          if (m.failed) {
            facts.assessmentFallbacks += 1;
            break;
          }
          const { tick } = m.result as TickAssessment;
          facts.localAssessments += 1;
          facts.assessTicks.set(tick, (facts.assessTicks.get(tick) ?? 0) + 1);
          break;
        }
        case E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED: {
          const type = e.activityTaskScheduledEventAttributes?.activityType?.name;
          if (type === 'assessSite') {
            const { tick } = activityInput<AssessSiteInput>(e);
            facts.assessTicks.set(tick, (facts.assessTicks.get(tick) ?? 0) + 1);
          } else if (type === 'applyActions') {
            const input = activityInput<ApplyActionsInput>(e);
            if (input.controls !== null) facts.controlActionKeys.push(input.actionKey);
            if (input.decision !== null) facts.decisionKeys.push(input.decision.decisionKey);
            facts.noticeKeys.push(...input.notices.map((n) => n.key));
          }
          break;
        }
        case E.EVENT_TYPE_ACTIVITY_TASK_STARTED:
          facts.activityRetries += Math.max(0, (e.activityTaskStartedEventAttributes?.attempt ?? 1) - 1);
          break;
        case E.EVENT_TYPE_WORKFLOW_TASK_FAILED: {
          const a = e.workflowTaskFailedEventAttributes;
          lastTaskOutcome = e.eventType;
          if (a?.cause === CAUSE.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND) {
            facts.closeRaces += 1;
            break;
          }
          facts.workflowTaskFailures.push({
            runId: run.runId,
            eventId: String(e.eventId),
            cause: CAUSE[a?.cause ?? 0] ?? String(a?.cause),
            message: a?.failure?.message ?? '',
          });
          lastTaskOutcome = e.eventType;
          break;
        }
        case E.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
          facts.workflowTaskTimeouts += 1;
          lastTaskOutcome = e.eventType;
          break;
        case E.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
          lastTaskOutcome = e.eventType;
          break;
        default:
          if (e.eventType !== null && e.eventType !== undefined && CLOSING.has(e.eventType))
            lastTaskOutcome = E.EVENT_TYPE_WORKFLOW_TASK_COMPLETED;
      }
    }
    if (lastTaskOutcome !== E.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) facts.endsClean = false;
  }
  return facts;
}

export interface LoopFigures {
  site: string;
  runs: number;
  ticksDue: number;
  ticksAssessed: number;
  ticksDoubled: number;
  ticksMissing: number;
  controlChanges: number;
  controlChangesDoubled: number;
  decisions: number;
  notifications: number;
  activityRetries: number;
  workflowTaskFailures: number;
  /** Close races the server resolved (see HistoryFacts.closeRaces). */
  closeRaces: number;
  workflowTaskTimeouts: number;
}

export interface LoopCheck {
  figures: LoopFigures;
  facts: HistoryFacts;
  audit: AuditRow[];
}

const range = (from: number, to: number): number[] =>
  Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);

/**
 * Reads a finished loop's chain (stopped, so nothing is in flight) and asserts the invariants. The
 * caller asserts what it expects of its own story (decisions sent, waits kept).
 */
export async function checkLoop(opts: {
  client: Client;
  pool: Pool;
  site: string;
  workflowId: string;
  chainId: string;
  ticks: number;
}): Promise<LoopCheck> {
  const { pool, site } = opts;
  const facts = historyFacts(await chainHistories(opts.client, opts.workflowId, opts.chainId));

  // Ticks: the workflow scheduled ticks 1..n once each; the database holds each of them once, and no
  // other assessment of this site (a second chain started by a fault would show up here).
  const { rows } = await pool.query<{ tick: string; n: string }>(
    'SELECT tick, count(*) AS n FROM assessments WHERE site = $1 GROUP BY tick ORDER BY tick',
    [site],
  );
  const assessed = new Map(rows.map((r) => [Number(r.tick), Number(r.n)]));
  expect([...facts.assessTicks.keys()].sort((a, b) => a - b)).toEqual(range(1, opts.ticks));
  expect([...facts.assessTicks.values()].filter((n) => n !== 1)).toEqual([]);
  expect([...assessed.keys()]).toEqual(range(1, opts.ticks));
  const { rows: chains } = await pool.query<{ chain_id: string }>(
    'SELECT DISTINCT chain_id FROM assessments WHERE site = $1',
    [site],
  );
  expect(chains.map((c) => c.chain_id)).toEqual([opts.chainId]);

  // Controls: one audit row per control change the workflow made, none twice, none lost; versions
  // contiguous, each row continuing the previous one, and the published controls are the last row's.
  const audit = await controlAudit(pool, site, 100_000);
  expect(audit.map((a) => a.actionKey)).toEqual(facts.controlActionKeys);
  expect(new Set(audit.map((a) => a.actionKey)).size).toBe(audit.length);
  audit.forEach((row, i) => {
    expect(row.newControls.version).toBe(i + 1);
    expect(row.oldControls).toEqual(i === 0 ? null : audit[i - 1]!.newControls);
    expect(row.changedFields.length).toBeGreaterThan(0);
  });
  const published = await readControls(pool, site);
  if (audit.length === 0) expect(published).toBeUndefined();
  else {
    const last = audit[audit.length - 1]!.newControls;
    expect(published).toMatchObject(last);
  }

  // Decisions and notifications: each stored once, exactly those the workflow acted on.
  const decisions = await listDecisions(pool, site);
  expect(decisions.map((d) => d.decisionKey).sort()).toEqual([...facts.decisionKeys].sort());
  expect(new Set(facts.decisionKeys).size).toBe(facts.decisionKeys.length);
  const { rows: notes } = await pool.query<{ notification_key: string }>(
    'SELECT notification_key FROM notifications WHERE site = $1',
    [site],
  );
  expect(notes.map((n) => n.notification_key).sort()).toEqual([...new Set(facts.noticeKeys)].sort());

  // No workflow task failure anywhere in the chain, and no run left with a failing task.
  expect(facts.workflowTaskFailures).toEqual([]);
  expect(facts.endsClean).toBe(true);

  const doubled = [...assessed.values()].filter((n) => n > 1).length;
  return {
    facts,
    audit,
    figures: {
      site,
      runs: facts.runs,
      ticksDue: opts.ticks,
      ticksAssessed: assessed.size,
      ticksDoubled: doubled,
      ticksMissing: range(1, opts.ticks).filter((t) => !assessed.has(t)).length,
      controlChanges: audit.length,
      controlChangesDoubled: audit.length - new Set(audit.map((a) => a.actionKey)).size,
      decisions: decisions.length,
      notifications: notes.length,
      activityRetries: facts.activityRetries,
      workflowTaskFailures: facts.workflowTaskFailures.length,
      closeRaces: facts.closeRaces,
      workflowTaskTimeouts: facts.workflowTaskTimeouts,
    },
  };
}

export interface EventFigures {
  what: string;
  sent: number;
  acknowledged: number;
  stored: number;
  lost: number;
  doubled: number;
}

/**
 * Events of one site: how many rows, how many distinct ids, and which of the expected ids are missing.
 * Every event the tests send has an id the test knows (its own, or the one derived from its content, read
 * back by content), so "stored exactly once" is checked id by id.
 */
export async function storedEvents(pool: Pool, site: string): Promise<{ rows: number; ids: Set<string> }> {
  const { rows } = await pool.query<{ event_id: string }>('SELECT event_id FROM request_events WHERE site = $1', [
    site,
  ]);
  return { rows: rows.length, ids: new Set(rows.map((r) => r.event_id)) };
}

/** Prints one table of figures per test (stderr: Jest shows it with the run's output). */
export function printFigures(title: string, rows: ReadonlyArray<Record<string, string | number>>): void {
  if (rows.length === 0) return;
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const cells = [columns, ...rows.map((r) => columns.map((c) => String(r[c] ?? '')))];
  const widths = columns.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
  const line = (row: string[]): string =>
    row.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  process.stderr.write(`\n[faults] ${title}\n${cells.map(line).join('\n')}\n`);
}

/**
 * Polls the loop's `state` query until `predicate` holds; on timeout the error shows where the loop
 * stood (tick, band, wait, pending activities with their attempts and last failure), so a stalled loop
 * is told apart from one that went elsewhere.
 */
export async function waitForLoop(
  handle: WorkflowHandle,
  what: string,
  predicate: (s: SiteHealthState) => boolean,
  timeoutMs: number,
): Promise<SiteHealthState> {
  let last: SiteHealthState | undefined;
  try {
    return await until(
      async () => {
        last = await handle.query(stateQuery);
        return predicate(last) ? last : undefined;
      },
      what,
      timeoutMs,
    );
  } catch (err) {
    const pending = await handle
      .describe()
      .then((d) =>
        (d.raw.pendingActivities ?? [])
          .map(
            (a) =>
              `${a.activityType?.name} attempt ` +
              `${a.attempt}${a.lastFailure?.message ? ` (${a.lastFailure.message})` : ''}`,
          )
          .join('; '),
      )
      .catch((e: Error) => `describe failed: ${e.message}`);
    const where = last
      ? `tick ${last.tick}, run ${last.runs}, band ${last.band}, score ${last.score} (smoothed ` +
        `${last.smoothedScore}), reasons ${last.reasons.join(', ') || 'none'}, controls ` +
        `${JSON.stringify(last.controls)}, alerts ${JSON.stringify(last.alerts)}, routes ` +
        `${last.routeDiagnosis?.summary ?? 'none'}, awaiting ${JSON.stringify(last.awaitingHuman)}, last ` +
        `decision ${last.lastDecision?.kind ?? 'none'}, pending decisions ${last.pendingDecisions}, rejected ` +
        `${JSON.stringify(last.rejected)}`
      : 'no state answered';
    throw new Error(`${(err as Error).message}\n  the loop: ${where}\n  pending activities: ${pending || 'none'}`);
  }
}
