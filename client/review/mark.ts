/**
 * `review <site> --incident T --mark right|false-alarm --why …`: a person's verdict on an incident, stored in
 * `incident_marks` (who, when, the incident's window, verdict, why) for `target-health tune` to learn from
 * (docs/tuning.md, "Labels"). The flags are checked before anything is read; the incident must be one the review
 * would find at T. Insert-only: marking again adds a row, and the latest counts.
 */
import { z } from 'zod';
import { UserError } from '../../core/common/user-error';
import { whoSchema, whySchema } from '../../core/control/decisions';
import { describeValue } from '@target-health/crawler/events/zod-issues';
import type { MarkVerdict } from '../../server/db/incident-marks';

export const MARK_VERDICTS: Record<string, MarkVerdict> = { right: 'right', 'false-alarm': 'false_alarm' };

const markSchema = z.object({ who: whoSchema(), why: whySchema() });

export interface MarkFlags {
  mark: string;
  why?: string;
  who?: string;
}

/** The flags → verdict, who and why, or one line naming the flag and the fix. */
export function parseMark(
  o: MarkFlags,
  defaultWho: () => string | undefined,
): {
  verdict: MarkVerdict;
  who: string;
  why: string;
} {
  const verdict = MARK_VERDICTS[o.mark.trim()];
  if (verdict === undefined)
    throw new UserError(`--mark: ${describeValue(o.mark)} is not a verdict; give --mark right or --mark false-alarm`);
  if (o.why === undefined)
    throw new UserError('--why: required with --mark, in a sentence (it goes into the audit trail)');
  const who = o.who ?? defaultWho();
  if (who === undefined)
    throw new UserError('--who: required with --mark (no login name to default to), e.g. --who alice@example.com');
  const parsed = markSchema.safeParse({ who, why: o.why });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new UserError(`--${String(issue.path[0])}: ${issue.message}`);
  }
  return { verdict, ...parsed.data };
}
