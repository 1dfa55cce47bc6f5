/**
 * What each mark says (pure): a few words drawn beside it on the chart — `paused`, `resumed by alice`,
 * `route alert: pool res-eu`, `throttled 16→3 (12 steps)` — and the whole story for its tooltip. People read a
 * chart without its legend; an unlabelled triangle made them look up what it was and then still not know which
 * alert. Control changes are folded into runs as the review folds them (core/control/action-runs.ts): twelve
 * one-minute throttle steps would be twelve labels on top of each other.
 */
import { actionKind, foldRuns, type ActionKind, type FoldableChange } from '../../core/control/action-runs';
import { describeChange } from '../../core/control/controls';
import { utcMinute } from './time-format';
import type { ChartMark } from './types';

/** A tooltip is a few lines, not the notification's whole text. */
const TEXT_MAX = 240;
/** The actor the live loop writes (workflows/site-health.ts): its own changes need no "by". */
export const LOOP_ACTOR = 'control-loop';
/** A person's changes carry `human:<who>` (workflows/site-health.ts). */
const HUMAN_PREFIX = 'human:';

const clip = (s: string): string => (s.length > TEXT_MAX ? `${s.slice(0, TEXT_MAX - 1)}…` : s);
const at = (t: number): string => `${utcMinute(t)} UTC`;

export interface DecisionRow {
  t: number;
  kind: string;
  who: string;
  why: string;
}

export interface NotificationRow {
  t: number;
  kind: string;
  severity: string;
  title: string | null;
  /** From the notification's evidence, when it carries them. */
  parserHealth: number | null;
  suspects: readonly { dimension: string; value: string }[];
}

export interface AuditChange extends FoldableChange {
  t: number;
  reason: string;
}

const DONE: Record<string, string> = { resume: 'resumed', stop: 'stopped', pause: 'paused' };

export function decisionMark(r: DecisionRow): ChartMark {
  const text = clip(`${at(r.t)} — ${r.kind} by ${r.who}: ${r.why}`);
  return {
    t: r.t,
    until: null,
    kind: 'decision',
    short: `${DONE[r.kind] ?? r.kind} by ${r.who}`,
    label: text,
    events: [{ t: r.t, text }],
  };
}

/** `route alert: pool res-eu`, `parser alert: health 42`, `alert: resisting`. */
function alertShort(r: NotificationRow): string {
  switch (r.kind) {
    case 'route_alert': {
      const [first, ...rest] = r.suspects;
      if (first === undefined) return 'route alert';
      return `route alert: ${first.dimension} ${first.value}${rest.length > 0 ? ` +${rest.length}` : ''}`;
    }
    case 'parser_health':
      return r.parserHealth === null ? 'parser alert' : `parser alert: health ${Math.round(r.parserHealth)}`;
    case 'reminder':
      return 'reminder: waiting for a decision';
    default:
      return `alert: ${r.kind.replace(/_/g, ' ')}`;
  }
}

export function alertMark(r: NotificationRow): ChartMark {
  const text = clip(`${at(r.t)} — ${r.severity} ${r.kind}${r.title ? `: ${r.title}` : ''}`);
  return { t: r.t, until: null, kind: 'alert', short: alertShort(r), label: text, events: [{ t: r.t, text }] };
}

/** Who made a change, as a person reads it; null for the loop itself. */
function whoOf(actor: string): string | null {
  if (actor === LOOP_ACTOR) return null;
  return actor.startsWith(HUMAN_PREFIX) ? actor.slice(HUMAN_PREFIX.length) : actor;
}

function runShort(kind: ActionKind, run: readonly AuditChange[]): string {
  const first = run[0]!;
  const last = run[run.length - 1]!;
  const who = whoOf(last.actor);
  const by = who === null ? '' : ` by ${who}`;
  const steps = run.length > 1 ? ` (${run.length} steps)` : '';
  const before = first.oldControls;
  const after = last.newControls;
  const concurrency =
    before !== null && before.concurrencyLimit !== after.concurrencyLimit
      ? ` ${before.concurrencyLimit}→${after.concurrencyLimit}`
      : '';
  switch (kind) {
    case 'throttle':
      return `throttled${concurrency}${steps}${by}`;
    case 'restore':
      return before?.paused === true && !after.paused ? `unpaused${by}` : `restored${concurrency}${steps}${by}`;
    case 'pause':
      return `paused${by}`;
    case 'resume':
      return `resumed${by}`;
    case 'stop':
      return `stopped${by}`;
    case 'change':
      if (before === null) return `controls set${by}`;
      if (before.band !== after.band) return `band ${before.band}→${after.band}${by}`;
      return `${describeChange(before, after)}${by}`;
  }
}

/** The site's control changes in [from, to), in time order, as one mark per run. */
export function controlMarks(changes: readonly AuditChange[]): ChartMark[] {
  return foldRuns(changes).map((run) => {
    const first = run[0]!;
    const last = run[run.length - 1]!;
    const kind = actionKind(first.oldControls, last.newControls, last.decisionKey !== null);
    const when = run.length > 1 ? `${utcMinute(first.t)} to ${at(last.t)}` : at(first.t);
    const steps = run.length > 1 ? ` in ${run.length} steps` : '';
    return {
      t: first.t,
      until: run.length > 1 ? last.t : null,
      kind: 'control change',
      short: runShort(kind, run),
      label: clip(
        `${when} — ${kind}${steps}: ${describeChange(first.oldControls, last.newControls)}, by ${last.actor}: ` +
          last.reason,
      ),
      events: run.map((c) => ({
        t: c.t,
        text: clip(`${at(c.t)} — ${describeChange(c.oldControls, c.newControls)}, by ${c.actor}: ${c.reason}`),
      })),
    };
  });
}
