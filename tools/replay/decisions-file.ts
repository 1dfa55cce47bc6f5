/**
 * The human decisions of a replayed period, from a JSON file: who decided what, when — so a replay can
 * cross a pause the way the live loop did. Each entry is validated with the loop's own decision schemas
 * (core/control/decisions.ts), so what the file may hold is exactly what `target-health decide` accepts:
 *
 *   [{ "at": "2026-11-24T10:42:00Z", "kind": "resume", "who": "alice@example.com", "why": "terms checked", "mode":
 *   "cautious" },
 *    { "at": "2026-11-24T15:00:00Z", "kind": "stop", "who": "bob@example.com", "why": "site gone" }]
 */
import { z } from 'zod';
import { DECISION_KINDS, type ParsedDecision, parseDecision } from '../../core/control/decisions';

export interface ReplayDecision {
  /** ISO time at which the decision was applied. */
  at: string;
  decision: ParsedDecision;
}

const entrySchema = z.looseObject({
  at: z.iso.datetime({ offset: true, error: 'expected an ISO-8601 time with a zone, e.g. 2026-11-24T10:42:00Z' }),
  kind: z.enum(DECISION_KINDS, { error: `expected one of ${DECISION_KINDS.join(', ')}` }),
});

/** Parsed file content → decisions in time order, or one line naming the entry and field. */
export function parseDecisionsFile(
  content: unknown,
): { ok: true; decisions: ReplayDecision[] } | { ok: false; message: string } {
  if (!Array.isArray(content))
    return {
      ok: false,
      message:
        'expected a JSON array of decisions like [{"at": "2026-11-24T10:42:00Z", "kind": "resume", "who": "…", ' +
        '"why": "…", "mode": "cautious"}]',
    };
  const out: ReplayDecision[] = [];
  for (const [i, raw] of content.entries()) {
    const head = entrySchema.safeParse(raw);
    if (!head.success) {
      const issue = head.error.issues[0]!;
      return { ok: false, message: `[${i}].${issue.path.join('.') || '(entry)'}: ${issue.message}` };
    }
    const { at, kind, ...payload } = head.data;
    const parsed = parseDecision(kind, payload);
    if (!parsed.ok) return { ok: false, message: `[${i}]: ${parsed.message}` };
    out.push({ at: new Date(at).toISOString(), decision: parsed.decision });
  }
  out.sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  return { ok: true, decisions: out };
}
