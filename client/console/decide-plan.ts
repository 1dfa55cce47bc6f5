/**
 * The Decide page's logic, pure: the form read into the decision's fields (the API's own body schema), and
 * the preview of a decision — the controls now and after, computed by the loop's own `decisionControls`
 * with the site's policy, whether the loop's gate allows it now (`decisionNotAllowed`), and the equivalent
 * `target-health decide` command. The decision is then sent as the same validated update the API sends
 * (server/api/decision-send.ts).
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { formatIssues } from '@target-health/crawler/events/zod-issues';
import type { ActionPolicy, Controls } from '../../core/control/controls';
import { decisionControls } from '../../core/control/decide';
import { type DecisionKind, type ParsedDecision, decisionNotAllowed } from '../../core/control/decisions';
import type { SiteHealthState } from '../../loop/messages';
import type { DecisionFields, DecisionPayload } from '../../server/api/decision-send';
import { decisionBodySchema } from '../../server/api/schemas/sites';
import { decideCommandLine } from '../commands/decide';

/** The form as posted: strings only (empty inputs are absent values); `csrf` is the guard's to check. */
const decideFormSchema = z.strictObject({
  csrf: z.string(),
  kind: z.string().max(20),
  why: z.string().default(''),
  mode: z.string().max(20).optional(),
  concurrency: z.string().max(40).optional(),
  revisitMultiplier: z.string().max(40).optional(),
  /** The preview's fingerprint, on the confirm form only. */
  plan: z.string().max(64).optional(),
});

/** What the person typed, by field (to put into the form again). */
export type Typed = Partial<Record<string, string>>;

export type DecideForm = { fields: DecisionFields; plan: string | undefined };

const blank = (v: string | undefined): string | undefined => (v === undefined || v.trim() === '' ? undefined : v);
const asNumber = (v: string | undefined): number | undefined =>
  blank(v) === undefined ? undefined : Number(v!.trim());

/**
 * The posted form as the fields of `POST /v1/sites/{site}/decisions`, checked with that route's schema, or
 * one line naming the field and the fix. What the person typed comes back in `typed`, to put into the form again.
 */
export function readDecideForm(
  body: unknown,
): { ok: true; form: DecideForm; typed: Typed } | { ok: false; message: string; typed: Typed } {
  const raw = decideFormSchema.safeParse(body ?? {});
  if (!raw.success) return { ok: false, message: formatIssues(raw.error, { root: 'form' }), typed: {} };
  const { csrf: _csrf, plan, ...typed } = raw.data;
  const fields = decisionBodySchema.safeParse({
    kind: typed.kind,
    why: typed.why,
    ...(blank(typed.mode) === undefined ? {} : { mode: typed.mode }),
    ...(asNumber(typed.concurrency) === undefined ? {} : { concurrency: asNumber(typed.concurrency) }),
    ...(asNumber(typed.revisitMultiplier) === undefined
      ? {}
      : { revisitMultiplier: asNumber(typed.revisitMultiplier) }),
  });
  if (!fields.success) return { ok: false, message: formatIssues(fields.error), typed };
  return { ok: true, form: { fields: fields.data, plan }, typed };
}

/** What a decision's preview shows, and what the confirm form carries. */
export interface DecisionPlan {
  site: string;
  kind: DecisionKind;
  who: string;
  why: string;
  /** The payload the update carries (who, why, the resume's mode and numbers). */
  payload: DecisionPayload;
  before: Controls | null;
  after: Controls;
  /** The loop after it, in words. */
  loopAfter: string;
  /** Why the loop's gate refuses it now (the loop's own words), or null. */
  notAllowed: string | null;
  /** `target-health decide …`, each value quoted for a shell. */
  command: string;
  /** A digest of what the preview showed: the confirm is refused when the site changed since. */
  fingerprint: string;
}

export type PlanState = Pick<SiteHealthState, 'site' | 'band' | 'controls' | 'awaitingHuman'>;

const LOOP_AFTER: Record<DecisionKind, string> = {
  resume:
    'goes on in the degrading band with these controls and judges the site afresh: only traffic from the ' +
    'decision on counts; it restores the usual pace step by step once healthy, or pauses again',
  pause: 'waits for a person: canaries only, it changes nothing on its own until someone resumes or stops it',
  stop: 'ends: the controls say stopped and the loop completes with a summary; a new loop needs `target-health start`',
};

/** The preview of a checked decision against the loop's state and the site's policy. */
export function planDecision(
  state: PlanState,
  policy: ActionPolicy,
  decision: ParsedDecision,
  payload: DecisionPayload,
): DecisionPlan {
  const after = decisionControls(state, decision, policy);
  const gate = {
    site: state.site,
    band: state.band,
    stopped: state.band === 'stopped',
    awaiting: state.awaitingHuman !== null,
  };
  const digest = JSON.stringify([
    decision.kind,
    payload,
    state.controls,
    after,
    state.band,
    state.awaitingHuman?.since,
  ]);
  return {
    site: state.site,
    kind: decision.kind,
    who: decision.who,
    why: decision.why,
    payload,
    before: state.controls,
    after,
    loopAfter: LOOP_AFTER[decision.kind],
    notAllowed: decisionNotAllowed(decision.kind, gate),
    command: decideCommandLine(decision.kind, state.site, payload),
    fingerprint: createHash('sha256').update(digest).digest('base64url').slice(0, 22),
  };
}

/** What a cautious resume would set now (the resume form says it before anyone previews). */
export function cautiousPreview(state: PlanState, policy: ActionPolicy): Controls {
  return decisionControls(state, { kind: 'resume', who: '-', why: '-', mode: { mode: 'cautious' } }, policy);
}
