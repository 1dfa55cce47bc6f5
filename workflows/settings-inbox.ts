/**
 * The loop's settings inbox (live reconfiguration): the `configure` update's validator checks the
 * payload with zod against the settings the loop will have (its own plus the changes already queued);
 * the handler (set in workflows/site-health.ts) queues the change; the main loop applies it between
 * ticks, like a decision (workflows/decision-inbox.ts), so a tick never runs half on old and half on new
 * settings. The update answers once the change is recorded and in force: what changed, old → new.
 */
import { ApplicationFailure, condition } from '@temporalio/workflow';
import type { SiteHealthConfig } from '../core/control/config';
import { settingsChangeKey } from '../core/control/keys';
import { type ConfigureResult, LoopErrors } from '../loop/messages';
import { type SettingsChangeRequest, parseSettingsChange } from '../core/control/settings-change';

export interface QueuedSettingsChange {
  change: SettingsChangeRequest;
  /** Idempotency key of the change (core/control/keys.ts). */
  key: string;
  outcome?: { ok: true; result: ConfigureResult } | { ok: false; message: string };
}

/** Records one change and puts it in force; answers with what changed. */
export type ApplySettingsChange = (q: QueuedSettingsChange) => Promise<ConfigureResult>;

/** The description of the `configure` update handler (the UI's "Updates" list shows it). */
export const CONFIGURE_DESCRIPTION =
  'Change the running loop\'s settings from the next tick on: {"who", "why"?, "settings"?: {"tickIntervalMs": ' +
  '30000, "policy": {…}, …}, "owner"?, "parserOwner"?}. Only the fields given change; validated before it is ' +
  'accepted; recorded (who, when, old → new); answers with the changes.';

export class SettingsInbox {
  private seq: number;
  private readonly queue: QueuedSettingsChange[] = [];

  /**
   * @param current the loop's settings now.
   * @param stopping true once a stop is applied or queued: a stopping loop takes no new settings.
   * @param apply records one change and puts it in force (the loop's `applySettings`).
   */
  constructor(
    private readonly site: string,
    private readonly chainId: string,
    carriedSeq: number,
    private readonly current: () => SiteHealthConfig,
    private readonly stopping: () => boolean,
    private readonly apply: ApplySettingsChange,
  ) {
    this.seq = carriedSeq;
  }

  /** The `configure` update's validator: throws the refusal, so a refused change leaves no trace in history. */
  validate(payload: unknown): void {
    this.check(payload);
  }

  /** The `configure` update: queued, answered once the main loop has recorded it and put it in force. */
  async configure(payload: unknown): Promise<ConfigureResult> {
    const q = this.enqueue(this.check(payload));
    await condition(() => q.outcome !== undefined);
    const outcome = q.outcome!;
    if (!outcome.ok) throw ApplicationFailure.nonRetryable(outcome.message, LoopErrors.InvalidSettings);
    return outcome.result;
  }

  get pending(): number {
    return this.queue.length;
  }

  /** What continue-as-new carries: the numbering of settings changes. */
  carry(): { settingsSeq: number } {
    return { settingsSeq: this.seq };
  }

  /** The settings the loop will have once the changes already queued are applied. */
  private planned(): SiteHealthConfig {
    return this.queue.length > 0 ? this.queue[this.queue.length - 1]!.change.settings : this.current();
  }

  private check(payload: unknown): SettingsChangeRequest {
    if (this.stopping())
      throw ApplicationFailure.nonRetryable(
        `configure: ${this.site} is stopping; its loop takes no new settings`,
        LoopErrors.InvalidSettings,
      );
    const parsed = parseSettingsChange(this.planned(), payload);
    if (!parsed.ok) throw ApplicationFailure.nonRetryable(parsed.message, LoopErrors.InvalidSettings);
    return parsed.change;
  }

  private enqueue(change: SettingsChangeRequest): QueuedSettingsChange {
    this.seq += 1;
    const q: QueuedSettingsChange = { change, key: settingsChangeKey(this.site, this.chainId, this.seq) };
    this.queue.push(q);
    return q;
  }

  /** Applies the queued changes in arrival order; after a stop they are refused. */
  async applyQueued(): Promise<void> {
    for (let q = this.queue.shift(); q !== undefined; q = this.queue.shift()) {
      if (this.stopping()) {
        q.outcome = { ok: false, message: `configure: ${this.site} has stopped; its loop takes no new settings` };
        continue;
      }
      q.outcome = { ok: true, result: await this.apply(q) };
    }
  }
}
