/**
 * What both controls clients hold, whatever keeps it current (the API's SSE stream, or PostgreSQL
 * LISTEN in-process): the `site → controls` map, applied by version; the listeners; the fail-safe for
 * sites with no record; `ready()`; and the figures of `status()`. The transports only feed it.
 *
 * Rules (docs/crawlers-library.md "Controls client"):
 * - A change is applied only when its version is higher than the one held (a snapshot and a change may
 *   carry the same record; a resumed stream may repeat one).
 * - A snapshot is the source's whole current state: it replaces the map. A site it no longer lists is
 *   forgotten; a lower version is taken too (the database was rebuilt and versions began again).
 * - When the source is lost, the map is kept as it is (the last known controls are obeyed); nothing
 *   falls back to full speed because the service is unreachable.
 * - A site with no record: `unknownSite: 'allow'` (default) answers undefined (crawl it with your own
 *   defaults); `'pause'` answers a synthetic paused record of version 0.
 */
import { tryNormaliseSite } from '../events/site';
import type { RecorderLogger } from '../recorder/report';
import type { ControlsView, SiteControls } from './types';

export type UnknownSitePolicy = 'allow' | 'pause';

export interface ControlsClientStatus {
  /** The source is connected and live (the stream is open, or the LISTEN connection is up). */
  connected: boolean;
  /** When the last snapshot or change arrived (undefined before the first). */
  lastEventAt: Date | undefined;
  /** Connections made again after the first one. */
  reconnects: number;
  /** Sites whose controls are held. */
  sites: number;
  /** Snapshots applied (1 after the first; more after reconnects that could not resume). */
  snapshots: number;
  /** The last connection problem, one line (undefined once connected again). */
  lastError: string | undefined;
}

export interface ControlsClient extends ControlsView {
  /**
   * Resolves once the first snapshot is held. Rejects at once when the source refuses the client (a bad
   * token, a wrong URL), else after `readyTimeoutMs`, with one line naming the problem. The client keeps
   * trying in the background either way; call ready() again to wait again.
   */
  ready(): Promise<void>;
  status(): ControlsClientStatus;
  /** Stops following the source; the last known controls stay readable. */
  close(): Promise<void>;
}

/** A problem a retry will not cure soon (a refused token, a wrong URL): ready() rejects with it at once. */
export class ControlsClientError extends Error {
  constructor(
    message: string,
    /** `unauthorized`, `forbidden`, `not_found`, `bad_request`, `not_a_stream`, `timeout`, `database`. */
    readonly code: string,
  ) {
    super(message);
    this.name = 'ControlsClientError';
  }
}

/**
 * The record `controlsFor` answers for a site with no record under `unknownSite: 'pause'` (version 0: no real record
 * has it).
 */
export function pausedUnknown(site: string): SiteControls {
  return {
    site,
    concurrencyLimit: 1,
    revisitMultiplier: 1,
    paused: true,
    canaryOnly: false,
    effectiveCostMultiplier: 1,
    band: 'learning',
    reason: "no controls known for this site yet (unknownSite: 'pause'); it is paused until its record arrives",
    version: 0,
    updatedAt: new Date(0).toISOString(),
  };
}

/** Normalised names by raw input: a crawler asks about few sites, once per request. */
const NAME_CACHE_LIMIT = 10_000;

export class ControlsState implements ControlsView {
  private readonly records = new Map<string, SiteControls>();
  private readonly listeners = new Set<(controls: SiteControls) => void>();
  private readonly names = new Map<string, string | null>();
  private readonly readyWaiters = new Set<{ resolve: () => void; reject: (err: Error) => void }>();
  private snapshotHeld = false;
  /** A refusal (token, URL): ready() rejects with it until the source accepts the client. */
  private refusal: ControlsClientError | undefined;
  private counters = { reconnects: 0, snapshots: 0 };
  private everConnected = false;
  /** Since when the source is lost (undefined while connected), and the last log line about it. */
  private downSince: number | undefined;
  private lastReminderAt = 0;
  private lastRefusalLogAt = -Infinity;
  connected = false;
  lastEventAt: Date | undefined;
  lastError: string | undefined;

  constructor(
    private readonly unknownSite: UnknownSitePolicy,
    private readonly readyTimeoutMs: number,
    private readonly log: () => RecorderLogger,
    /** Names the source in ready()'s timeout message. */
    private readonly sourceName: string,
  ) {}

  controlsFor(site: string): SiteControls | undefined {
    const name = this.normalise(site);
    const held = name === null ? undefined : this.records.get(name);
    if (held !== undefined) return held;
    return this.unknownSite === 'pause' ? pausedUnknown(name ?? site) : undefined;
  }

  onChange(listener: (controls: SiteControls) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Applies one record when newer than the one held; true when it was. */
  apply(record: SiteControls): boolean {
    const site = this.normalise(record.site);
    if (site === null) return false;
    this.lastEventAt = new Date();
    const held = this.records.get(site);
    if (held !== undefined && held.version >= record.version) return false;
    const applied = site === record.site ? record : { ...record, site };
    this.records.set(site, applied);
    this.announce(applied);
    return true;
  }

  /** Replaces the map with the source's current state; listeners hear of every record that differs. */
  applySnapshot(records: readonly SiteControls[]): void {
    const previous = new Map(this.records);
    this.records.clear();
    const changed: SiteControls[] = [];
    for (const record of records) {
      const site = this.normalise(record.site);
      if (site === null) continue;
      const applied = site === record.site ? record : { ...record, site };
      this.records.set(site, applied);
      if (previous.get(site)?.version !== applied.version) changed.push(applied);
    }
    this.lastEventAt = new Date();
    this.counters.snapshots += 1;
    this.snapshotHeld = true;
    this.refusal = undefined;
    for (const waiter of this.readyWaiters) waiter.resolve();
    this.readyWaiters.clear();
    for (const record of changed) this.announce(record);
  }

  /** The source is connected (again). */
  connectedNow(): void {
    if (this.downSince !== undefined) {
      this.log().info(
        { downForMs: Date.now() - this.downSince, sites: this.records.size },
        `controls: ${this.sourceName} is back after ${Math.round((Date.now() - this.downSince) / 100) / 10} s`,
      );
      this.downSince = undefined;
    }
    if (this.everConnected) this.counters.reconnects += 1;
    this.everConnected = true;
    this.connected = true;
    this.lastError = undefined;
  }

  /** The source is lost (or could not be reached): logged once, then a reminder a minute while it lasts. */
  disconnected(problem: string): void {
    this.connected = false;
    this.lastError = problem;
    const now = Date.now();
    if (this.downSince === undefined) {
      this.downSince = now;
      this.lastReminderAt = now;
      this.log().warn(
        { problem, sites: this.records.size },
        `controls: lost ${this.sourceName} (${problem}); obeying the last known controls of ` +
          `${this.records.size} sites and reconnecting`,
      );
    } else if (now - this.lastReminderAt >= 60_000) {
      this.lastReminderAt = now;
      this.log().warn(
        { problem, sites: this.records.size, downForMs: now - this.downSince },
        `controls: ${this.sourceName} still unreachable after ${Math.round((now - this.downSince) / 1000)} s ` +
          `(${problem}); obeying the last known controls`,
      );
    }
  }

  /** The source refused the client: ready() rejects with this until it is accepted. */
  refused(err: ControlsClientError): void {
    this.connected = false;
    const now = Date.now();
    if (this.refusal?.message !== err.message || now - this.lastRefusalLogAt >= 60_000) {
      this.lastRefusalLogAt = now;
      this.log().error(
        { code: err.code, sites: this.records.size },
        `${err.message}; obeying the last known controls of ${this.records.size} sites and retrying`,
      );
    }
    this.refusal = err;
    this.lastError = err.message;
    for (const waiter of this.readyWaiters) waiter.reject(err);
    this.readyWaiters.clear();
  }

  ready(): Promise<void> {
    if (this.snapshotHeld) return Promise.resolve();
    if (this.refusal !== undefined) return Promise.reject(this.refusal);
    return new Promise<void>((resolve, reject) => {
      const waiter = {
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (err: Error) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      const timer = setTimeout(() => {
        this.readyWaiters.delete(waiter);
        const why = this.lastError === undefined ? '' : ` (last problem: ${this.lastError})`;
        reject(
          new ControlsClientError(
            `controls: no snapshot from ${this.sourceName} within ${this.readyTimeoutMs} ms${why}; still ` +
              `trying in the background`,
            'timeout',
          ),
        );
      }, this.readyTimeoutMs);
      timer.unref();
      this.readyWaiters.add(waiter);
    });
  }

  status(): ControlsClientStatus {
    return {
      connected: this.connected,
      lastEventAt: this.lastEventAt,
      reconnects: this.counters.reconnects,
      sites: this.records.size,
      snapshots: this.counters.snapshots,
      lastError: this.lastError,
    };
  }

  /** Pending ready() calls end (rejected) when the client closes. */
  close(): void {
    this.connected = false;
    const err = new ControlsClientError('controls: the client was closed before its first snapshot', 'closed');
    for (const waiter of this.readyWaiters) waiter.reject(err);
    this.readyWaiters.clear();
  }

  /** The product's spelling of a site (packages/crawler/src/events/site.ts); null for a name that is not a host. */
  private normalise(input: string): string | null {
    let name = this.names.get(input);
    if (name === undefined) {
      const r = tryNormaliseSite(input);
      name = r.ok ? r.site : null;
      if (this.names.size >= NAME_CACHE_LIMIT) this.names.clear();
      this.names.set(input, name);
    }
    return name;
  }

  /** A listener's failure must not keep the others from hearing of the change. */
  private announce(record: SiteControls): void {
    for (const listener of this.listeners) {
      try {
        listener(record);
      } catch (err) {
        this.log().warn(
          { site: record.site, err: err instanceof Error ? err.message : String(err) },
          'controls: an onChange listener threw; ignored',
        );
      }
    }
  }
}
