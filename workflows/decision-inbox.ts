/**
 * The loop's decision inbox (the safe-message-handlers idiom): signal and update handlers only
 * validate a decision and queue it; the main loop applies queued decisions between ticks, in arrival
 * order, through one function. So a decision never interleaves with a tick's actions and every control
 * change happens in one place. Updates are answered once their decision is applied; signals cannot
 * answer, so their refusals are logged and kept (bounded) for the `state` query — with patch
 * `live-settings` also signals of a name the loop does not know (a mistyped `resmue`), and a refusal is
 * dropped once a later decision is applied (it no longer says anything about the site). Other work the
 * loop applies between ticks (the settings inbox) is woken and drained here too.
 */
import { ApplicationFailure, condition, log, setDefaultSignalHandler, setHandler } from '@temporalio/workflow';
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
} from '../control/decisions';
import { decisionKey } from '../control/keys';
import { REJECTED_LIMIT, pushBounded } from '../control/loop-state';
import { type DecisionResult, LoopErrors, decisionMessages } from '../control/messages';
import type { InboxView } from '../control/state-view';

export interface QueuedDecision {
  decision: ParsedDecision;
  via: 'signal' | 'update';
  /** Idempotency key of the decision (control/keys.ts). */
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

const DESCRIPTIONS: Record<DecisionKind, string> = {
  resume:
    'A person resumes a paused site: {"who", "why", "mode": "cautious"} (degrading-band controls) or {"who", "why", "mode": "explicit", "concurrency": n, "revisitMultiplier": x}. Only while the site waits for a decision.',
  stop: 'A person stops the site: {"who", "why"}. Controls say stopped and the loop completes with a summary.',
  pause: 'An operator pauses the site by hand: {"who", "why"}. Canaries only, waiting for resume or stop.',
};

export class DecisionInbox {
  private seq: number;
  private rejected: Refusal[];
  private refusals: number;
  private side: SideQueue | null = null;
  private readonly queue: QueuedDecision[] = [];
  /** The decision being applied (its activity in flight): validators count it as already applied. */
  private applying: QueuedDecision | null = null;
  /** The applied `stop`, once there is one: the loop then finishes. */
  stopped: { decision: ParsedDecision; decidedAt: string } | null = null;

  /**
   * @param gateNow the gate as the loop stands now (band, awaiting a person), before queued decisions.
   */
  constructor(
    private readonly site: string,
    private readonly chainId: string,
    carried: { decisionSeq: number; rejected: readonly string[] },
    private readonly gateNow: () => Omit<GateView, 'stopped'>,
    /** Patch `live-settings`: an applied decision drops the refusals that came before it. */
    private readonly pruneRefusals = false,
  ) {
    this.seq = carried.decisionSeq;
    // Carried refusals all came before any decision of this run.
    this.rejected = carried.rejected.map((message, n) => ({ n, message }));
    this.refusals = this.rejected.length;
  }

  /** Also wake for, and apply, another queue's work between ticks (patch `live-settings`). */
  alsoApply(side: SideQueue): void {
    this.side = side;
  }

  /**
   * Records signals of names the loop has no handler for as refused, instead of letting them vanish
   * (patch `live-settings`): the name is cut and made well formed, the payload not echoed.
   */
  registerUnknownSignals(): void {
    setDefaultSignalHandler((name: string) => {
      // Quoted, cut, well formed and on one line (control characters and line separators escaped).
      const shown = describeValue(String(name), SIGNAL_NAME_CHARS);
      const known = DECISION_KINDS.join(', ');
      log.warn('unknown signal refused', { site: this.site, name: shown });
      this.refuse(
        `unknown signal ${shown}: this loop takes ${known} (e.g. target-health decide resume ${this.site} --who … --why …)`,
      );
    });
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

  /** Sets the signal and update handlers of every decision kind. */
  register(): void {
    for (const kind of DECISION_KINDS) this.registerKind(kind);
  }

  private registerKind(kind: DecisionKind): void {
    const { signal, update } = decisionMessages[kind];
    setHandler(
      signal,
      (payload: unknown) => {
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
      },
      { description: `${DESCRIPTIONS[kind]} (Signal: fire and forget; refusals show in the state query.)` },
    );
    setHandler(
      update,
      async (payload: unknown): Promise<DecisionResult> => {
        const q = this.enqueue(this.check(kind, payload), 'update');
        await condition(() => q.outcome !== undefined);
        const outcome = q.outcome!;
        if (!outcome.ok) throw ApplicationFailure.nonRetryable(outcome.message, LoopErrors.DecisionNotAllowed);
        return outcome.result;
      },
      {
        validator: (payload: unknown) => {
          this.check(kind, payload);
        },
        description: `${DESCRIPTIONS[kind]} (Update: validated before it is accepted; answers with the controls applied.)`,
      },
    );
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
  async applyQueued(apply: ApplyDecision): Promise<void> {
    for (let q = this.queue.shift(); q !== undefined; q = this.queue.shift()) {
      const problem = decisionNotAllowed(q.decision.kind, { ...this.gateNow(), stopped: this.stopped !== null });
      if (problem !== null) {
        q.outcome = { ok: false, message: problem };
        continue;
      }
      this.applying = q;
      const result = await apply(q).finally(() => {
        this.applying = null;
      });
      if (q.decision.kind === 'stop') this.stopped = { decision: q.decision, decidedAt: result.decidedAt };
      // A person has acted since those refusals: they no longer say anything about the site.
      if (this.pruneRefusals) this.rejected = this.rejected.filter((r) => r.n >= q.refusalsBefore);
      q.outcome = { ok: true, result };
    }
  }

  /** Applies queued decisions and lets every handler finish (before continue-as-new or the end). */
  async drain(apply: ApplyDecision, allHandlersFinished: () => boolean): Promise<void> {
    for (;;) {
      await this.applyQueued(apply);
      if (this.sidePending()) await this.side!.applyQueued();
      if (this.queue.length === 0 && !this.sidePending() && allHandlersFinished()) return;
      await condition(() => this.queue.length > 0 || this.sidePending() || allHandlersFinished());
    }
  }

  private sidePending(): boolean {
    return this.side !== null && this.side.pending > 0;
  }

  /**
   * Waits until the next tick is due (`remainingMs`, asked again after each wake: the schedule's slot,
   * or the whole interval again for runs that predate the schedule); a decision wakes the loop at once
   * and is applied. Returns early once a stop is applied, or with `early` when `wakeEarly` holds (the
   * history has grown too large to wait: the loop continues as new first).
   */
  async waitForNextTick(
    remainingMs: () => number,
    summary: string | (() => string),
    apply: ApplyDecision,
    wakeEarly: () => boolean = () => false,
  ): Promise<'tick' | 'early'> {
    for (;;) {
      if (wakeEarly()) return 'early';
      // Settings first: a new tick interval books a new slot, which `remainingMs` then reads.
      if (this.sidePending()) await this.side!.applyQueued();
      const ms = remainingMs();
      if (ms <= 0) return 'tick';
      const woken = await condition(() => this.queue.length > 0 || this.sidePending() || wakeEarly(), ms, {
        summary: typeof summary === 'string' ? summary : summary(),
      });
      if (!woken) return 'tick';
      await this.applyQueued(apply);
      if (this.stopped !== null) return 'tick';
    }
  }
}
