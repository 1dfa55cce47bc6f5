/**
 * The whole fleet as the console last read it, shared by the Fleet page and its live stream (one per API
 * process). Reading a fleet costs a visibility listing of every loop (server/fleet/read-fleet.ts: most of the
 * page's time at 1,000 sites), while the page only needs it as fresh as the live updates are: a read is kept
 * for `maxAgeMs` (the live stream's refresh interval), every request meanwhile is answered from it with its
 * own filters, and requests that arrive while a read runs wait for that one read. A control change (a pause,
 * a decision) drops the kept read at once, so a person coming back from the Decide page sees the change.
 */
import type { Fleet } from '../../server/fleet/fleet';

export interface FleetSnapshotDeps {
  /** The whole fleet, unfiltered. */
  readAll: () => Promise<Fleet>;
  /** How long a read answers requests. */
  maxAgeMs: number;
  now?: () => number;
}

export class FleetSnapshot {
  private kept: { fleet: Fleet; readAt: number } | null = null;
  private reading: Promise<Fleet> | null = null;
  /** Bumped by `invalidate`: a read begun before it is not kept. */
  private generation = 0;
  /** Reads of the whole fleet made (tests and the bench). */
  reads = 0;

  constructor(private readonly deps: FleetSnapshotDeps) {}

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  /** The fleet read at most `maxAgeMs` ago; else a read, shared with every caller until it ends. */
  get(): Promise<Fleet> {
    if (this.kept !== null && this.now() - this.kept.readAt < this.deps.maxAgeMs)
      return Promise.resolve(this.kept.fleet);
    return this.read();
  }

  /** A read begun now (or the one running, begun since the last change): the live stream's refresh. */
  read(): Promise<Fleet> {
    if (this.reading !== null) return this.reading;
    const generation = this.generation;
    // Its age counts from when it began: what it shows may be that old.
    const readAt = this.now();
    this.reads++;
    const reading = this.deps
      .readAll()
      .then((fleet) => {
        if (generation === this.generation) this.kept = { fleet, readAt };
        return fleet;
      })
      .finally(() => {
        if (this.reading === reading) this.reading = null;
      });
    this.reading = reading;
    return reading;
  }

  /** Something changed (a site's controls): the next request reads afresh, not joining a read begun before. */
  invalidate(): void {
    this.generation++;
    this.kept = null;
    this.reading = null;
  }
}
