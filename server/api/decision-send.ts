/**
 * A person's decision as every surface that is not the CLI sends it — `POST /v1/sites/{site}/decisions`
 * and the console's Decide page: the payload built with `who` from the signed-in principal (never a name
 * the caller types), checked with the workflow's own schema, sent as the loop's validated update and
 * answered with the applied result, or why it was refused (nothing changed). Either caller maps the
 * refusal onto its own answer (a JSON error, a page).
 */
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { workflowIdForSite } from '../../core/common/names';
import { type ParsedDecision, parseDecision } from '../../core/control/decisions';
import {
  type DecisionInputs,
  type DecisionKind,
  type DecisionResult,
  LoopErrors,
  decisionMessages,
} from '../../loop/messages';
import { executeUpdateRetrying } from '../temporal/update-retry';

/** A decision's fields as a person gives them: `decisionBodySchema`'s output (server/api/schemas/sites.ts). */
export interface DecisionFields {
  kind: DecisionKind;
  why: string;
  mode?: 'cautious' | 'explicit' | undefined;
  concurrency?: number | undefined;
  revisitMultiplier?: number | undefined;
}

/**
 * Why a decision changed nothing: `invalid` (the payload, 400), `not_allowed` (now, 409), `not_found` (no running
 * loop, 404: its message says so without the fix, which each surface words its own way).
 */
export type DecisionRefusal = { refused: 'invalid' | 'not_allowed' | 'not_found'; message: string };

/** The workflow's payload of a decision: `who` is the principal's name. */
/** The payload's values: text and numbers. */
export type DecisionPayload = Record<string, string | number>;

export function decisionPayload(who: string, f: DecisionFields): DecisionPayload {
  return {
    who,
    why: f.why,
    ...(f.mode === undefined ? {} : { mode: f.mode }),
    ...(f.concurrency === undefined ? {} : { concurrency: f.concurrency }),
    ...(f.revisitMultiplier === undefined ? {} : { revisitMultiplier: f.revisitMultiplier }),
  };
}

/** The decision checked with the workflow's schema (the one-line message names the field), before any round trip. */
export function checkDecision(
  who: string,
  f: DecisionFields,
): { ok: true; decision: ParsedDecision; payload: DecisionPayload } | ({ ok: false } & DecisionRefusal) {
  const payload = decisionPayload(who, f);
  const checked = parseDecision(f.kind, payload);
  return checked.ok
    ? { ok: true, decision: checked.decision, payload }
    : { ok: false, refused: 'invalid', message: checked.message };
}

/**
 * Sends the decision as the loop's update; the applied result, or why the loop (or its absence) refused it.
 * A payload the schema refuses is answered without connecting to Temporal.
 */
export async function sendDecision(
  temporal: () => Promise<Client>,
  site: string,
  who: string,
  f: DecisionFields,
): Promise<{ ok: true; result: DecisionResult } | ({ ok: false } & DecisionRefusal)> {
  const checked = checkDecision(who, f);
  if (!checked.ok) return checked;
  const handle = (await temporal()).workflow.getHandle(workflowIdForSite(site));
  try {
    // Checked above with the workflow's own schema: a valid payload of this kind.
    const input = checked.payload as unknown as DecisionInputs[typeof f.kind];
    const result = await executeUpdateRetrying(handle, decisionMessages[f.kind].update, [input]);
    return { ok: true, result };
  } catch (err) {
    if (err instanceof WorkflowNotFoundError)
      return { ok: false, refused: 'not_found', message: `site: no running health loop for ${site}` };
    if (err instanceof WorkflowUpdateFailedError) {
      const cause = err.cause;
      const message = cause?.message ?? err.message;
      if (cause instanceof ApplicationFailure && cause.type === LoopErrors.InvalidDecision)
        return { ok: false, refused: 'invalid', message };
      if (cause instanceof ApplicationFailure && cause.type === LoopErrors.DecisionNotAllowed)
        return { ok: false, refused: 'not_allowed', message };
    }
    throw err;
  }
}
