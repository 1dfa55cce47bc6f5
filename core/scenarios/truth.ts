/**
 * A scenario's truth: what really happened in its traffic and what the loop should have done about it.
 * `simulate` writes it beside the events (`<name>.truth.json`), `backtest` reads it to score the loop and
 * the reference rules. Validated with zod: a hand-edited truth file is refused with the field named.
 */
import { z } from 'zod';

const isoTime = z.iso.datetime({ offset: true, error: 'expected an ISO-8601 time with a zone' });
const span = z.strictObject({ from: isoTime, to: isoTime });

/** The single cause a scenario injects (`none`: nothing hostile happens; `mixed`: several at once). */
export const SCENARIO_CAUSES = [
  'none',
  'hard_block',
  'challenge',
  'soft_block',
  'latency',
  'route',
  'parser',
  'load',
  'mixed',
] as const;
export type ScenarioCause = (typeof SCENARIO_CAUSES)[number];

export const scenarioTruthSchema = z.strictObject({
  /** Scenario name, e.g. `sudden-wall`. */
  scenario: z.string().min(1),
  site: z.string().min(1),
  description: z.string(),
  cause: z.enum(SCENARIO_CAUSES),
  /** The reason key that should head the loop's reasons during the incident (null: none expected). */
  expectedTopReason: z.string().nullable(),
  /** The quiet history (the baseline's days) and the incident day, half-open. */
  history: span,
  incident: span,
  /** When the cause starts (null: nothing starts). */
  onset: isoTime.nullable(),
  /** First minute from which hard blocks are more than half of the requests (5-minute share), or null. */
  hardBlocks50At: isoTime.nullable(),
  /** First minute from which refusals (hard blocks + challenges + soft blocks) pass half (5-minute share), or null. */
  refused50At: isoTime.nullable(),
  /** What the loop should do. */
  expect: z.strictObject({
    /** The site should be paused (resisting) at some point after onset. */
    pause: z.boolean(),
    /** The site should at least degrade (throttle) after onset. */
    degrade: z.boolean(),
    /** The route key a route alert should name (`pool=dc-3`, `country=BR`), or null: no route alert. */
    routeAlert: z.string().nullable(),
    /** The parser's owner should be alerted. */
    parserAlert: z.boolean(),
  }),
});
export type ScenarioTruth = z.output<typeof scenarioTruthSchema>;
