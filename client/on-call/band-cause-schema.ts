/**
 * What put a site in its band (core/control/band-wording.ts `BandCause`) in the `--json` of `status`,
 * `explain`, `history` and `review`: `{"kind": "rule", "rule": "majority_refusal"}`, `{"kind": "score"}`,
 * `{"kind": "person"}` (a decision) or `{"kind": "none"}`.
 */
import { z } from 'zod';
import { REFUSAL_RULES } from '../../core/control/band-wording';

export const bandCauseSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('rule'), rule: z.enum(REFUSAL_RULES) }),
  z.object({ kind: z.literal('score') }),
  z.object({ kind: z.literal('person') }),
  z.object({ kind: z.literal('none') }),
]);
