/**
 * What a crawler obeys for one site: the record the API serves (`GET /v1/sites/{site}/controls`, the
 * `controls` events of `GET /v1/controls/stream`), as the controls client holds it. docs/api.md
 * "Controls" says what each field asks of a crawler.
 */
export type HealthBand = 'learning' | 'healthy' | 'degrading' | 'resisting' | 'stopped';

export interface SiteControls {
  /** The site, normalised (lower case, no trailing dot): `shop.example.com`. */
  site: string;
  /** Requests in flight against the site at most. */
  concurrencyLimit: number;
  /** Multiply revisit intervals by this (≥ 1). */
  revisitMultiplier: number;
  /** No production request while paused (canaries only when `canaryOnly`). */
  paused: boolean;
  canaryOnly: boolean;
  /** For a cost-aware scheduler: what a request to the site costs now, relative to normal. */
  effectiveCostMultiplier: number;
  band: HealthBand;
  /** Why the controls are what they are (the loop's last decision). */
  reason: string;
  /** Grows with every change of the site's record: apply a record only when newer than the one held. */
  version: number;
  /** ISO-8601 time of the change. */
  updatedAt: string;
}

/**
 * The crawler-side view of the controls, whatever keeps it current (the API's stream, PostgreSQL
 * LISTEN/NOTIFY in-process, or a fixed map in a test). Adapters (target-health/crawlee, the Scrapy
 * extension's Python twin) depend on this interface only.
 */
export interface ControlsView {
  /**
   * The last known controls of a site (any spelling: `Shop.Example.com.` is `shop.example.com`), or
   * undefined when none is known — the caller then applies its fail-safe (see `unknownSite`).
   */
  controlsFor(site: string): SiteControls | undefined;
  /** Called with each newer record as it is applied. Returns the unsubscribe function. */
  onChange(listener: (controls: SiteControls) => void): () => void;
}
