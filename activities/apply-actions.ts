/**
 * The action activity: in one transaction, store a human decision (if any), write the site's controls
 * with their audit row (if they change), and queue the notifications in the outbox. Everything is keyed
 * (action key, decision key, notification keys), so a retry — after a crash, a lost reply, or while a
 * zombie attempt is still running — changes nothing a second time: the audit row's unique key is the
 * backstop, checked after taking the row lock.
 */
import { Context } from '@temporalio/activity';
import { workflowUiLink } from '../server/config/env';
import { auditRowExists, controlsOf, readControls, writeControls } from '../server/db/controls';
import { type DecisionRow, recordDecisionOnce } from '../server/db/decisions';
import { enqueueNotification } from '../server/db/notifications';
import type { Pool } from '../server/db/pool';
import type { Logger } from '../server/logging/logger';
import type { NotificationPayload } from '../server/notifications/types';
import { changedFields } from '../core/control/controls';
import type { NoticeDraft, NoticeKind } from '../core/control/notices';
import { siteConsoleUrl } from '../core/common/console-paths';
import type { ControlChange } from '../core/control/plan';

export interface ApplyActionsInput {
  site: string;
  workflowId: string;
  chainId: string;
  /** Idempotency key of the controls change: `site/chain/tick/controls` or `site/chain/decision/n/controls`. */
  actionKey: string;
  /** The assessment that caused it (or that the decision was taken on). */
  assessmentKey: string | null;
  /** `control-loop`, or `human:<who>` for a decision. */
  actor: string;
  controls: ControlChange | null;
  decision: Omit<DecisionRow, 'site' | 'workflowId' | 'chainId'> | null;
  notices: Array<{ key: string; draft: NoticeDraft }>;
}

export interface ApplyActionsResult {
  /** Database time: the decision's (stable across retries) or the transaction's. */
  appliedAt: string;
  /** The controls changed (by this attempt or an earlier one of the same action). */
  controlsChanged: boolean;
  controlsVersion: number | null;
  /** Outbox keys to deliver (all of them, also when queued by an earlier attempt). */
  notificationKeys: string[];
}

export interface ApplyActionsDeps {
  pool: Pool;
  logger: Logger;
  /** Base URL of the Temporal UI for links in notifications. */
  uiUrl: string;
  /** Base URL of the web console for links in notifications (its Site and Review pages). */
  consoleUrl: string;
}

function namespace(): string {
  try {
    return Context.current().info.workflowNamespace ?? 'default';
  } catch {
    return 'default';
  }
}

/** Kinds after which the person wants the incident's review (it is the latest incident of the site). */
const OPENS_OR_CLOSES_INCIDENT: ReadonlySet<NoticeKind> = new Set(['resisting', 'paused', 'resumed', 'stopped']);

export function makeApplyActions(deps: ApplyActionsDeps) {
  return async function applyActions(input: ApplyActionsInput): Promise<ApplyActionsResult> {
    const client = await deps.pool.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{ now: Date }>('SELECT now() AS now');
      let appliedAt = rows[0]!.now;
      if (input.decision !== null) {
        const d = await recordDecisionOnce(client, {
          ...input.decision,
          site: input.site,
          workflowId: input.workflowId,
          chainId: input.chainId,
        });
        appliedAt = d.decidedAt;
      }
      let controlsChanged = false;
      let controlsVersion: number | null = null;
      if (input.controls !== null) {
        // Lock first, then look for an earlier attempt: a zombie attempt holding the lock finishes
        // (or dies) before we decide whether this action is already done.
        const old = await readControls(client, input.site, { forUpdate: true });
        const done = await auditRowExists(client, input.actionKey);
        if (done) {
          controlsChanged = true;
          controlsVersion = done.version;
          deps.logger.info(
            { site: input.site, actionKey: input.actionKey },
            'action already applied (activity retried): not applying it again',
          );
        } else {
          const fields = changedFields(old ? controlsOf(old) : null, input.controls.next);
          if (fields.length > 0) {
            const written = await writeControls(
              client,
              {
                site: input.site,
                workflowId: input.workflowId,
                actionKey: input.actionKey,
                next: input.controls.next,
                changedFields: fields,
                routeDiagnosis: input.controls.routeDiagnosis,
                assessmentKey: input.assessmentKey,
                decisionKey: input.decision?.decisionKey ?? null,
                actor: input.actor,
              },
              old,
            );
            controlsChanged = true;
            controlsVersion = written.version;
          }
        }
      }
      const notificationKeys: string[] = [];
      if (input.notices.length > 0) {
        const owners = await client.query<{ owner: string | null; parser_owner: string | null }>(
          'SELECT owner, parser_owner FROM sites WHERE site = $1',
          [input.site],
        );
        const site = owners.rows[0];
        const link = workflowUiLink(deps.uiUrl, namespace(), input.workflowId);
        const consoleLink = siteConsoleUrl(deps.consoleUrl, input.site);
        for (const { key, draft } of input.notices) {
          const recipient =
            draft.audience === 'parser_owner' ? (site?.parser_owner ?? site?.owner ?? null) : (site?.owner ?? null);
          const payload: NotificationPayload = {
            key,
            ...draft,
            site: input.site,
            recipient,
            link,
            consoleLink,
            reviewLink: OPENS_OR_CLOSES_INCIDENT.has(draft.kind)
              ? siteConsoleUrl(deps.consoleUrl, input.site, '/review')
              : null,
            workflowId: input.workflowId,
          };
          await enqueueNotification(client, {
            notificationKey: key,
            site: input.site,
            kind: draft.kind,
            severity: draft.severity,
            recipient,
            payload,
          });
          notificationKeys.push(key);
        }
      }
      await client.query('COMMIT');
      return { appliedAt: appliedAt.toISOString(), controlsChanged, controlsVersion, notificationKeys };
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  };
}
