/**
 * What `target-health tune --json` prints, one document per site (`--fleet`: one per line): the labels, the search,
 * the proposal with its scorecard before and after, the incidents whose outcome changes, why each setting moved,
 * the guard rail's verdicts, and what `--apply` did. Validated before it is printed.
 */
import { z } from 'zod';

const iso = z.string();

export const scorecardSchema = z.object({
  missed: z.number().int().nonnegative(),
  falsePauses: z.number().int().nonnegative(),
  leadMs: z.number(),
  flaps: z.number().int().nonnegative(),
  throttledHealthyMs: z.number().nonnegative(),
});

export const LABEL_KINDS = ['false-pause', 'right-pause', 'late-pause', 'false-alarm', 'right-warning'] as const;

const incidentSchema = z.object({
  from: iso,
  to: iso,
  label: z.enum(LABEL_KINDS).nullable(),
  judgedAt: iso,
  loopPausedAt: iso.nullable(),
  because: z.string(),
  settingsChangedAfter: z.string().nullable(),
});

const moveSchema = z.object({ field: z.string(), from: z.number(), to: z.number() });

const outcomeSchema = z.object({
  incidentFrom: iso,
  label: z.enum(LABEL_KINDS),
  before: z.string(),
  after: z.string(),
  /** The outcome the label wants, after the change. */
  rightAfter: z.boolean(),
});

export const tuneReportSchema = z.object({
  site: z.string(),
  from: iso,
  to: iso,
  tickMs: z.number().int().positive(),
  settingsFrom: z.string(),
  recordFrom: z.string(),
  incidents: z.array(incidentSchema),
  quietDays: z.array(z.string()),
  verdict: z.object({
    kind: z.enum(['propose', 'no-change', 'not-enough-evidence', 'rejected']),
    text: z.string(),
  }),
  search: z.object({ evaluations: z.number().int(), rounds: z.number().int(), better: z.number().int() }).nullable(),
  current: scorecardSchema.nullable(),
  proposal: z
    .object({
      changes: z.array(moveSchema.extend({ why: z.string() })),
      scorecard: scorecardSchema,
      outcomes: z.array(outcomeSchema),
      /** The settings patch `configure` is sent. */
      patch: z.record(z.string(), z.unknown()),
      summary: z.string(),
    })
    .nullable(),
  guard: z
    .object({
      source: z.string(),
      totalMs: z.number(),
      rejected: z.array(z.object({ changes: z.array(moveSchema), regressions: z.array(z.string()) })),
    })
    .nullable(),
  applied: z.object({ changeKey: z.string(), changedAt: iso.nullable(), fields: z.array(z.string()) }).nullable(),
});
export type TuneReport = z.output<typeof tuneReportSchema>;
