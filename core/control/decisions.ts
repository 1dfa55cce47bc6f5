/**
 * Human decisions — `resume`, `stop`, `pause` — as they arrive (signal or update payloads), validated
 * with zod, plus the rule of when each one is allowed. Update validators and signal handlers use the
 * same two checks, so a signal is refused for exactly the reasons an update is, with the same message.
 */
import { z } from 'zod';
import { isWellFormed } from '@target-health/crawler/events/well-formed';
import { formatIssues } from '@target-health/crawler/events/zod-issues';

export const DECISION_KINDS = ['resume', 'stop', 'pause'] as const;
export type DecisionKind = (typeof DECISION_KINDS)[number];

// Who and why go into the audit trail (PostgreSQL text and jsonb) and notifications: a NUL or half an
// emoji would make the action activity fail on every retry, with later decisions queued behind it.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;
const storable = (text: string): boolean => isWellFormed(text) && !CONTROL_CHARACTERS.test(text);
const STORABLE = { error: 'must be plain text: no NUL or control characters, no broken Unicode (lone surrogates)' };
// Who is shown on one line (the audit trail's actor, the workflow's event summaries, `status`): a tab, a
// line break (NEL and U+2028 included) or a C1 control there would forge a line or an escape of its own.
// eslint-disable-next-line no-control-regex
const LINE_BREAKING = /[\u0009-\u000D\u0080-\u009F\u2028\u2029]/;
const ONE_LINE = { error: 'must be one line: no tab, line break or other control character' };

const who = z
  .string({ error: 'required: who decides, e.g. "alice@example.com"' })
  .trim()
  .min(1, { error: 'required: who decides, e.g. "alice@example.com"' })
  .max(200, { error: 'at most 200 characters' })
  .refine(storable, STORABLE)
  .refine((text) => !LINE_BREAKING.test(text), ONE_LINE);
const why = z
  .string({ error: 'required: why, in a sentence (it goes into the audit trail)' })
  .trim()
  .min(1, { error: 'required: why, in a sentence (it goes into the audit trail)' })
  .max(2000, { error: 'at most 2000 characters' })
  .refine(storable, STORABLE);

const RESUME_MODE_SCHEMA = z.discriminatedUnion('mode', [
  z.strictObject({ mode: z.literal('cautious') }),
  z.strictObject({
    mode: z.literal('explicit'),
    concurrency: z
      .int({ error: 'expected a whole number 1-10000' })
      .min(1, { error: 'expected a whole number 1-10000' })
      .max(10_000, { error: 'expected a whole number 1-10000' }),
    revisitMultiplier: z
      .number({ error: 'expected a number 1-100 (1 = usual revisit intervals)' })
      .min(1, { error: 'expected a number 1-100 (1 = usual revisit intervals)' })
      .max(100, { error: 'expected a number 1-100 (1 = usual revisit intervals)' }),
  }),
]);
export type ResumeMode = z.output<typeof RESUME_MODE_SCHEMA>;

const RESUME_HELP = 'mode: "cautious" (degrading-band controls) or "explicit" with concurrency and revisitMultiplier';

/**
 * `{"who", "why", "mode": "cautious"}` or `{"who", "why", "mode": "explicit", "concurrency": 4,
 * "revisitMultiplier": 2}`. `mode` defaults to cautious; concurrency/revisitMultiplier without a mode
 * mean explicit. Parsed into `{who, why, mode: ResumeMode}`.
 */
const resumePayloadSchema = z
  .strictObject({
    who,
    why,
    mode: z.enum(['cautious', 'explicit'], { error: `expected ${RESUME_HELP}` }).optional(),
    concurrency: z.unknown().optional(),
    revisitMultiplier: z.unknown().optional(),
  })
  .transform((p, ctx) => {
    const explicit =
      p.mode === 'explicit' ||
      (p.mode === undefined && (p.concurrency !== undefined || p.revisitMultiplier !== undefined));
    if (!explicit && (p.concurrency !== undefined || p.revisitMultiplier !== undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['mode'],
        message:
          'is "cautious", which sets its own controls; drop concurrency/revisitMultiplier or use mode "explicit"',
      });
      return z.NEVER;
    }
    if (explicit) {
      const missing = (['concurrency', 'revisitMultiplier'] as const).filter((f) => p[f] === undefined);
      if (missing.length > 0) {
        for (const f of missing) ctx.addIssue({ code: 'custom', path: [f], message: 'required with mode "explicit"' });
        return z.NEVER;
      }
    }
    const candidate = explicit
      ? { mode: 'explicit', concurrency: p.concurrency, revisitMultiplier: p.revisitMultiplier }
      : { mode: 'cautious' };
    const mode = RESUME_MODE_SCHEMA.safeParse(candidate);
    if (!mode.success) {
      for (const issue of mode.error.issues) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
      return z.NEVER;
    }
    return { who: p.who, why: p.why, mode: mode.data };
  });

const stopPayloadSchema = z.strictObject({ who, why });
const pausePayloadSchema = z.strictObject({ who, why });

export type ResumePayload = z.output<typeof resumePayloadSchema>;
export type StopPayload = z.output<typeof stopPayloadSchema>;
export type PausePayload = z.output<typeof pausePayloadSchema>;
/** What a client sends (before defaults). */
export type ResumeInput = z.input<typeof resumePayloadSchema>;
export type StopInput = z.input<typeof stopPayloadSchema>;
export type PauseInput = z.input<typeof pausePayloadSchema>;

export type ParsedDecision =
  | { kind: 'resume'; who: string; why: string; mode: ResumeMode }
  | { kind: 'stop'; who: string; why: string }
  | { kind: 'pause'; who: string; why: string };

const SCHEMAS = {
  resume: resumePayloadSchema,
  stop: stopPayloadSchema,
  pause: pausePayloadSchema,
} as const satisfies Record<DecisionKind, z.ZodType>;

/** What each decision does to the gate once applied: a new kind must say, or this does not compile. */
export const GATE_AFTER: Record<DecisionKind, { awaiting: boolean; stops: boolean }> = {
  resume: { awaiting: false, stops: false },
  stop: { awaiting: false, stops: true },
  pause: { awaiting: true, stops: false },
};

/** Payload → decision, or one line naming the field and the fix. */
export function parseDecision(
  kind: DecisionKind,
  payload: unknown,
): { ok: true; decision: ParsedDecision } | { ok: false; message: string } {
  if (payload === undefined || payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
    const example =
      kind === 'resume'
        ? '{"who": "alice@example.com", "why": "checked the terms", "mode": "cautious"}'
        : '{"who": "alice@example.com", "why": "..."}';
    return { ok: false, message: `${kind}: expected a JSON object like ${example}` };
  }
  const parsed = SCHEMAS[kind].safeParse(payload);
  if (!parsed.success) return { ok: false, message: `${kind}: ${formatIssues(parsed.error)}` };
  return { ok: true, decision: { kind, ...parsed.data } as ParsedDecision };
}

/** What the gate looks like to a decision: enough of the loop's state to say yes or no. */
export interface GateView {
  site: string;
  band: string;
  stopped: boolean;
  /** Awaiting a person (after a resisting band or a manual pause), counting decisions already queued. */
  awaiting: boolean;
}

/** Why this decision is not allowed now, or null when it is. Resume needs a paused site; nothing after stop. */
export function decisionNotAllowed(kind: DecisionKind, gate: GateView): string | null {
  if (gate.stopped)
    return `${kind}: ${gate.site} is stopped; start a new loop with \`target-health start ${gate.site}\``;
  if (kind === 'resume' && !gate.awaiting)
    return `resume: ${gate.site} is not paused waiting for a decision (band ${gate.band}); nothing to resume`;
  if (kind === 'pause' && gate.awaiting)
    return `pause: ${gate.site} is already paused and waiting for a decision; send resume or stop`;
  return null;
}

// Schemas leave a module shared by the workflow sandbox only through functions (workflows/shared-modules.ts).
export const resumeModeSchema = (): typeof RESUME_MODE_SCHEMA => RESUME_MODE_SCHEMA;
/**
 * Who and why as every person's message takes them (decisions, live reconfiguration: core/control/settings-change.ts).
 */
export const whoSchema = (): typeof who => who;
export const whySchema = (): typeof why => why;
