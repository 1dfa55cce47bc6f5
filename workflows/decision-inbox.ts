/**
 * The loop's decision inbox (the safe-message-handlers idiom): the workflow's signal and update
 * handlers (set in workflows/site-health.ts) only validate a decision here and queue it; the main loop
 * applies queued decisions between ticks, in arrival order, through one function. So a decision never
 * interleaves with a tick's actions and every control change happens in one place. Updates are
 * answered once their decision is applied; signals cannot answer, so their refusals are logged and kept
 * (bounded) for the `state` query — signals of a name the loop does not know (a mistyped `resmue`)
 * too — and a refusal is dropped once a later decision is applied (it no longer says anything about the
 * site). The other work the loop applies between ticks (the settings inbox) is woken and drained here
 * too.
 */
import { ApplicationFailure, condition, log } from '@temporalio/workflow';
import { cutText, wellFormed } from '@target-health/crawler/events/well-formed';
import { describeValue } from '@target-health/crawler/events/zod-issues';
import {
  type DecisionKind,
  type GateView,
  type ParsedDecision,
  DECISION_KINDS,
  GATE_AFTER,
  decisionNotAllowed,
  parseDecision,
} from '../core/control/decisions';
import { decisionKey } from '../core/control/keys';
import { REJECTED_LIMIT, pushBounded } from '../core/control/loop-state';
import { type DecisionResult, LoopErrors } from '../loop/messages';
import type { InboxView } from '../loop/state-view';

export interface QueuedDecision {
  decision: ParsedDecision;
  via: 'signal' | 'update';
  /** Idempotency key of the decision (core/control/keys.ts). */
  key: string;
  outcome?: { ok: true; result: DecisionResult } | { ok: false; message: string };
  /** Refusals recorded before this decision arrived (numbering of `Refusal.n`): applied, it drops them. */
  refusalsBefore: number;
}

/** A refused signal kept for the `state` query, numbered in arrival order (within this run). */
interface Refusal {
  n: number;
  message: string;
}

/** More work the loop applies between ticks, woken and drained with the decisions (the settings inbox). */
export interface SideQueue {
  readonly pending: number;
  applyQueued(): Promise<void>;
}

/** Applies one decision (writes controls, audit, notice) and answers with what was applied. */
export type ApplyDecision = (q: QueuedDecision) => Promise<DecisionResult>;

/** A refusal kept for the `state` query is cut to this many characters: refusals echo what was sent. */
const REJECTED_MESSAGE_CHARS = 500;
/** An unknown signal's name is echoed in its refusal cut to this many characters. */
const SIGNAL_NAME_CHARS = 80;

const DECISIONS: Record<DecisionKind, string> = {
  resume:
    'A person resumes a paused site: {"who", "why", "mode": "cautious"} (degrading-band controls) or {"who", ' +
    '"why", "mode": "explicit", "concurrency": n, "revisitMultiplier": x}. Only while the site waits for a ' +
    'decision.',
  stop: 'A person stops the site: {"who", "why"}. Controls say stopped and the loop completes with a summary.',
  pause: 'An operator pauses the site by hand: {"who", "why"}. Canaries only, waiting for resume or stop.',
};

/** The description of a decision's signal handler (the UI's "Signals" list shows it). */
export function decisionSignalDescription(kind: DecisionKind): string {
  return `${DECISIONS[kind]} (Signal: fire and forget; refusals show in the state query.)`;
}

/** The description of a decision's update handler (the UI's "Updates" list shows it). */
export function decisionUpdateDescription(kind: DecisionKind): string {
  return `${DECISIONS[kind]} (Update: validated before it is accepted; answers with the controls applied.)`;
}

export class DecisionInbox {
  private seq: number;
  private rejected: Refusal[];
  private refusals: number;
  private readonly queue: QueuedDecision[] = [];
  /** The decision being applied (its activity in flight): validators count it as already applied. */
  private applying: QueuedDecision | null = null;
  /** The applied `stop`, once there is one: the loop then finishes. */
  stopped: { decision: ParsedDecision; decidedAt: string } | null = null;

  /**
   * @param gateNow the gate as the loop stands now (band, awaiting a person), before queued decisions.
   * @param apply applies one decision (the loop's `applyDecision`).
   * @param side the other work applied between ticks (the settings inbox).
   */
  constructor(
    private readonly site: string,
    private readonly chainId: string,
    carried: { decisionSeq: number; rejected: readonly string[] },
    private readonly gateNow: () => Omit<GateView, 'stopped'>,
    private readonly apply: ApplyDecision,
    private readonly side: SideQueue,
  ) {
    this.seq = carried.decisionSeq;
    // Carried refusals all came before any decision of this run.
    this.rejected = carried.rejected.map((message, n) => ({ n, message }));
    this.refusals = this.rejected.length;
  }

  /** A decision's signal: queued if valid and allowed now, else refused (logged, kept for the `state` query). */
  signal(kind: DecisionKind, payload: unknown): void {
    try {
      this.enqueue(this.check(kind, payload), 'signal');
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      log.warn('decision signal refused', {
        site: this.site,
        kind,
        message: cutText(wellFormed(message), REJECTED_MESSAGE_CHARS),
      });
      this.refuse(message);
    }
  }

  /** A decision's update validator: throws the refusal, so a refused update leaves no trace in history. */
  validate(kind: DecisionKind, payload: unknown): void {
    this.check(kind, payload);
  }

  /** A decision's update: queued, answered once the main loop has applied it. */
  async update(kind: DecisionKind, payload: unknown): Promise<DecisionResult> {
    const q = this.enqueue(this.check(kind, payload), 'update');
    await condition(() => q.outcome !== undefined);
    const outcome = q.outcome!;
    if (!outcome.ok) throw ApplicationFailure.nonRetryable(outcome.message, LoopErrors.DecisionNotAllowed);
    return outcome.result;
  }

  /**
   * A signal of a name the loop has no handler for, recorded as refused instead of vanishing: the name
   * is cut and made well formed, the payload not echoed.
   */
  unknownSignal(name: string): void {
    // Quoted, cut, well formed and on one line (control characters and line separators escaped).
    const shown = describeValue(String(name), SIGNAL_NAME_CHARS);
    const known = DECISION_KINDS.join(', ');
    log.warn('unknown signal refused', { site: this.site, name: shown });
    this.refuse(
      `unknown signal ${shown}: this loop takes ${known} (e.g. target-health decide resume ${this.site} --who ` +
        `… --why …)`,
    );
  }

  /** True once a stop is applied or queued. */
  stopping(): boolean {
    return this.gate().stopped;
  }

  private refuse(message: string): void {
    // Kept in the workflow's state and carried by continue-as-new: bounded and well formed.
    const kept = cutText(wellFormed(message), REJECTED_MESSAGE_CHARS);
    this.rejected = pushBounded(this.rejected, { n: this.refusals, message: kept }, REJECTED_LIMIT);
    this.refusals += 1;
  }

  get pending(): number {
    return this.queue.length;
  }

  view(): InboxView {
    return { rejected: this.rejected.map((r) => r.message), pending: this.queue.length, seq: this.seq };
  }

  /** What continue-as-new carries: the numbering of decisions and the refusals shown. */
  carry(): { decisionSeq: number; rejected: string[] } {
    return { decisionSeq: this.seq, rejected: this.rejected.map((r) => r.message) };
  }

  /** The gate as it will be once the decisions already queued are applied. */
  private gate(): GateView {
    const now = this.gateNow();
    let awaiting = now.awaiting;
    let stopping = this.stopped !== null;
    for (const q of this.applying === null ? this.queue : [this.applying, ...this.queue]) {
      const effect = GATE_AFTER[q.decision.kind];
      awaiting = effect.awaiting;
      stopping ||= effect.stops;
    }
    return { ...now, stopped: stopping, awaiting };
  }

  private check(kind: DecisionKind, payload: unknown): ParsedDecision {
    const parsed = parseDecision(kind, payload);
    if (!parsed.ok) throw ApplicationFailure.nonRetryable(parsed.message, LoopErrors.InvalidDecision);
    const problem = decisionNotAllowed(kind, this.gate());
    if (problem !== null) throw ApplicationFailure.nonRetryable(problem, LoopErrors.DecisionNotAllowed);
    return parsed.decision;
  }

  private enqueue(decision: ParsedDecision, via: QueuedDecision['via']): QueuedDecision {
    this.seq += 1;
    const q: QueuedDecision = {
      decision,
      via,
      key: decisionKey(this.site, this.chainId, this.seq),
      refusalsBefore: this.refusals,
    };
    this.queue.push(q);
    return q;
  }

  /** Applies the queued decisions in arrival order; one no longer allowed (after a stop) is refused. */
  async applyQueued(): Promise<void> {
    for (let q = this.queue.shift(); q !== undefined; q = this.queue.shift()) {
      const problem = decisionNotAllowed(q.decision.kind, { ...this.gateNow(), stopped: this.stopped !== null });
      if (problem !== null) {
        q.outcome = { ok: false, message: problem };
        continue;
      }
      this.applying = q;
      const result = await this.apply(q).finally(() => {
        this.applying = null;
      });
      if (q.decision.kind === 'stop') this.stopped = { decision: q.decision, decidedAt: result.decidedAt };
      // A person has acted since those refusals: they no longer say anything about the site.
      this.rejected = this.rejected.filter((r) => r.n >= q.refusalsBefore);
      q.outcome = { ok: true, result };
    }
  }

  /** Applies queued decisions and settings and lets every handler finish (before continue-as-new or the end). */
  async drain(allHandlersFinished: () => boolean): Promise<void> {
    for (;;) {
      await this.applyQueued();
      if (this.side.pending > 0) await this.side.applyQueued();
      if (this.queue.length === 0 && this.side.pending === 0 && allHandlersFinished()) return;
      await condition(() => this.queue.length > 0 || this.side.pending > 0 || allHandlersFinished());
    }
  }

  /**
   * Waits until the next tick is due (`remainingMs`, asked again after each wake: the booked slot);
   * queued settings are applied first (a new tick interval books a new slot), and a decision wakes the
   * loop at once and is applied. Returns early once a stop is applied, or with `early` when `wakeEarly`
   * holds (the history has grown too large to wait: the loop continues as new first).
   */
  async waitForNextTick(
    remainingMs: () => number,
    summary: () => string,
    wakeEarly: () => boolean,
  ): Promise<'tick' | 'early'> {
    for (;;) {
      if (wakeEarly()) return 'early';
      // Settings first: a new tick interval books a new slot, which `remainingMs` then reads.
      if (this.side.pending > 0) await this.side.applyQueued();
      const ms = remainingMs();
      if (ms <= 0) return 'tick';
      const woken = await condition(() => this.queue.length > 0 || this.side.pending > 0 || wakeEarly(), ms, {
        summary: summary(),
      });
      if (!woken) return 'tick';
      await this.applyQueued();
      if (this.stopped !== null) return 'tick';
    }
  }
}
