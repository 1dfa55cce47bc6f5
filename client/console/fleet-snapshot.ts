/**
 * The whole fleet as the console last read it, shared by the Fleet page and its live stream (one per API
 * process). Reading a fleet costs a visibility listing of every loop (server/fleet/read-fleet.ts: most of the
 * page's time at 1,000 sites), while the page only needs it as fresh as the live updates are: a read is kept
 * for `maxAgeMs` (the live stream's refresh interval), every request meanwhile is answered from it with its
 * own filters, and requests that arrive while a read runs wait for that one read. Up to `staleMs` old, a kept
 * read still answers at once while a new one is made behind it (the page says how old it is, and its live
 * stream brings the new read a moment later); older, the request waits for the new read. A control change (a
 * pause, a decision, a band change) drops the kept read at once, so what a page shows is never behind a
 * control change: only scores can be older, and by at most `staleMs`.
 */
import type { Fleet } from '../../server/fleet/fleet';

export interface FleetSnapshotDeps {
  /** The whole fleet, unfiltered. */
  readAll: () => Promise<Fleet>;
  /** How long a read answers requests as it is. */
  maxAgeMs: number;
  /** How long a read answers requests at once while a new one is made (≥ maxAgeMs). */
  staleMs: number;
  now?: () => number;
  /** A read made behind a request failed (the next request tries again). */
  onBackgroundError?: (err: unknown) => void;
}

export interface KeptFleet {
  fleet: Fleet;
  /** When the read began (ms since the epoch): what it shows may be that old. */
  readAt: number;
}

export class FleetSnapshot {
  private kept: KeptFleet | null = null;
  private reading: Promise<KeptFleet> | null = null;
  /** Every read still running, also those a change made nobody wait for (`settled`). */
  private readonly inFlight = new Set<Promise<KeptFleet>>();
  /** Bumped by `invalidate`: a read begun before it is not kept. */
  private generation = 0;
  /** Reads of the whole fleet made (tests and the bench). */
  reads = 0;

  constructor(private readonly deps: FleetSnapshotDeps) {}

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  /**
   * The fleet read at most `maxAgeMs` ago; else one read at most `staleMs` ago while a new read is made;
   * else a new read, shared with every caller until it ends.
   */
  async get(): Promise<KeptFleet> {
    const kept = this.kept;
    const age = kept === null ? Number.POSITIVE_INFINITY : this.now() - kept.readAt;
    if (kept !== null && age < this.deps.maxAgeMs) return kept;
    if (kept !== null && age < this.deps.staleMs) {
      this.read().catch((err: unknown) => this.deps.onBackgroundError?.(err));
      return kept;
    }
    return this.begin();
  }

  /** A read begun now (or the one running, begun since the last change): the live stream's refresh. */
  async read(): Promise<Fleet> {
    return (await this.begin()).fleet;
  }

  private begin(): Promise<KeptFleet> {
    if (this.reading !== null) return this.reading;
    const generation = this.generation;
    // Its age counts from when it began: what it shows may be that old.
    const readAt = this.now();
    this.reads++;
    const reading = this.deps
      .readAll()
      .then((fleet) => {
        const read = { fleet, readAt };
        if (generation === this.generation) this.kept = read;
        return read;
      })
      .finally(() => {
        this.inFlight.delete(reading);
        if (this.reading === reading) this.reading = null;
      });
    this.inFlight.add(reading);
    this.reading = reading;
    return reading;
  }

  /**
   * Resolves once no read runs (failed or not), or after `maxWaitMs`: the API waits for it before closing its
   * Temporal connection, so no listing is cut off mid-call (its client would retry on a closed channel).
   */
  async settled(maxWaitMs = 30_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    if (this.inFlight.size === 0) return;
    await Promise.race([
      Promise.allSettled([...this.inFlight]),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, maxWaitMs))),
    ]);
    clearTimeout(timer);
  }

  /** Something changed (a site's controls): the next request reads afresh, not joining a read begun before. */
  invalidate(): void {
    this.generation++;
    this.kept = null;
    this.reading = null;
  }
}
