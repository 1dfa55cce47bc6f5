/**
 * A site's history as the live loop would have left it, for charting without hours of real ticks: the
 * replay engine walks stored traffic tick by tick (tools/replay/engine.ts) and each tick is written through
 * the loop's own db functions — its whole assessment (recordAssessmentOnce; `explain` reads it as a live
 * tick's), its control change (writeControls, with its audit row), its notifications (enqueueNotification),
 * the person's decisions (recordDecisionOnce). Those functions stamp rows with the database's now(); the rows
 * are then moved to the tick's time, which is what a live loop's now() would have been. Used by `npm run
 * bench:chart` and the chart's and the review's integration tests.
 */
import type { Pool } from '../../server/db/pool';
import { recordAssessmentOnce } from '../../server/db/assessments';
import { readControls, writeControls } from '../../server/db/controls';
import { recordDecisionOnce } from '../../server/db/decisions';
import { enqueueNotification } from '../../server/db/notifications';
import { parseSiteHealthInput } from '../../core/control/config';
import type { Controls } from '../../core/control/controls';
import { parseDecisionsFile } from '../../tools/replay/decisions-file';
import { replayWithRecord } from '../../tools/replay/record';
import type { ReplayResult } from '../../tools/replay/types';

export interface HumanDecision {
  at: string;
  kind: 'resume' | 'stop' | 'pause';
  who: string;
  why: string;
}

export interface RecordedHistory {
  result: ReplayResult;
  assessments: number;
  controlChanges: number;
  notifications: number;
  decisions: number;
}

const changedFields = (a: Controls | null, b: Controls): string[] =>
  (Object.keys(b) as (keyof Controls)[]).filter((k) => a === null || a[k] !== b[k]);

export async function recordReplayAsHistory(
  pool: Pool,
  o: { site: string; from: Date; to: Date; tickMs: number; decisions?: HumanDecision[] },
): Promise<RecordedHistory> {
  const parsedConfig = parseSiteHealthInput({ site: o.site, tickIntervalMs: o.tickMs });
  if (!parsedConfig.ok) throw new Error(parsedConfig.message);
  const { carried: _carried, ...config } = parsedConfig.value;
  const parsedDecisions = parseDecisionsFile(
    (o.decisions ?? []).map((d) => ({ ...d, ...(d.kind === 'resume' ? { mode: 'cautious' } : {}) })),
  );
  if (!parsedDecisions.ok) throw new Error(parsedDecisions.message);
  const { result, record } = await replayWithRecord(pool, {
    site: o.site,
    from: o.from,
    to: o.to,
    tickMs: o.tickMs,
    config,
    decisions: parsedDecisions.decisions,
  });
  // Each tick's whole assessment, as the loop's activity stores it: `explain --at` reads these rows as live ones.
  const assessed = new Map(record.ticks.map((t) => [t.tick, t.result]));

  const workflowId = `site-health:${o.site}`;
  const chainId = 'chart-history';
  let previous: Controls | null = null;
  const counts = { assessments: 0, controlChanges: 0, notifications: 0, decisions: 0 };
  for (const t of result.ticks) {
    const assessmentKey = `${o.site}/${chainId}/${t.tick}`;
    await recordAssessmentOnce(pool, {
      assessmentKey,
      site: o.site,
      workflowId,
      chainId,
      tick: t.tick,
      assessedAt: new Date(t.asOf),
      result: assessed.get(t.tick) ?? {
        // A tick whose data the assessment refused has no assessment: its row says only that.
        assessment: { state: t.state, health: { score: t.score }, parser: { score: t.parserHealth }, reasons: [] },
      },
    });
    counts.assessments += 1;
    if (t.change !== null && t.controls !== null) {
      const actionKey = `${assessmentKey}/act`;
      const old = await readControls(pool, o.site);
      await writeControls(
        pool,
        {
          site: o.site,
          workflowId,
          actionKey,
          next: t.controls,
          changedFields: changedFields(previous, t.controls),
          routeDiagnosis: null,
          assessmentKey,
          decisionKey: null,
          // The actors the live loop writes (workflows/site-health.ts): the chart's labels name people by them.
          actor: 'control-loop',
        },
        old,
      );
      await pool.query('UPDATE control_audit SET changed_at = $2 WHERE action_key = $1', [actionKey, t.asOf]);
      counts.controlChanges += 1;
      previous = t.controls;
    }
    for (const n of t.notices) {
      const key = `${assessmentKey}/${n.kind}`;
      await enqueueNotification(pool, {
        notificationKey: key,
        site: o.site,
        kind: n.kind,
        severity: n.kind === 'resisting' ? 'critical' : 'warning',
        recipient: null,
        payload: { title: n.title },
      });
      await pool.query('UPDATE notifications SET created_at = $2 WHERE notification_key = $1', [key, t.asOf]);
      counts.notifications += 1;
    }
  }
  for (const [i, d] of (o.decisions ?? []).entries()) {
    const decisionKey = `${o.site}/${chainId}/decision/${i + 1}`;
    await recordDecisionOnce(pool, {
      decisionKey,
      site: o.site,
      workflowId,
      chainId,
      kind: d.kind,
      who: d.who,
      why: d.why,
      mode: d.kind === 'resume' ? { mode: 'cautious' } : null,
      via: 'signal',
      assessmentKey: null,
      awaitingSince: null,
    });
    await pool.query('UPDATE decisions SET decided_at = $2 WHERE decision_key = $1', [decisionKey, d.at]);
    counts.decisions += 1;
    // The replay ends at a stop without a tick; live, the stop's action publishes the `stopped` band.
    if (d.kind === 'stop' && previous !== null) {
      const actionKey = `${decisionKey}/act`;
      const next: Controls = {
        ...previous,
        band: 'stopped',
        paused: true,
        canaryOnly: false,
        reason: `stopped by ${d.who}: ${d.why}`,
      };
      await writeControls(
        pool,
        {
          site: o.site,
          workflowId,
          actionKey,
          next,
          changedFields: changedFields(previous, next),
          routeDiagnosis: null,
          assessmentKey: null,
          decisionKey,
          actor: `human:${d.who}`,
        },
        await readControls(pool, o.site),
      );
      await pool.query('UPDATE control_audit SET changed_at = $2 WHERE action_key = $1', [actionKey, d.at]);
      counts.controlChanges += 1;
    }
  }
  return { result, ...counts };
}
