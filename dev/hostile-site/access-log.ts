/**
 * The hostile site's access log: every request a host answered, in memory, in arrival order — what the
 * end-to-end tests assert on ("no production request reached the site while it was paused"), so it
 * records what was *served*, not what the crawler believes happened.
 *
 * Bounded per host (oldest entries dropped first, and counted), so a demo left running for hours does
 * not grow without limit.
 */
import type { ModeKind } from './modes';

/** What a request was answered with. */
export const SERVED_KINDS = [
  'page',
  'not-found',
  'robots',
  'challenge',
  'soft-block',
  'wall',
  'route-block',
  'reset',
] as const;
export type ServedKind = (typeof SERVED_KINDS)[number];

export interface AccessLogEntry {
  /** Site clock, ms since the epoch, when the request arrived. */
  ts: number;
  method: string;
  /** Path and query as requested. */
  path: string;
  /** Status served; 0 when the connection was reset instead. */
  status: number;
  served: ServedKind;
  /** The vendor page served for a refusal (`cloudflare-challenge`, `unusual-traffic`…). */
  page?: string;
  /** The host's mode when the request arrived. */
  mode: ModeKind;
  /** The route label added by a forward proxy (`x-th-route`), or `direct`. */
  route: string;
  /** A canary fetch: `x-th-canary: 1`, `?th-canary=1`, or a canary runner's user agent. */
  canary: boolean;
  userAgent: string;
  latencyMs: number;
}

export interface LogQuery {
  /** Only entries with `ts >= since`. */
  since?: number;
  route?: string;
  canary?: boolean;
}

export interface LogSummary {
  total: number;
  canary: number;
  production: number;
  byStatus: Record<string, number>;
  byServed: Partial<Record<ServedKind, number>>;
  byRoute: Record<string, number>;
}

export interface Rate {
  count: number;
  windowMs: number;
  perSecond: number;
}

export const DEFAULT_MAX_ENTRIES = 200_000;

export class AccessLog {
  private entries: AccessLogEntry[] = [];
  private droppedCount = 0;

  constructor(private readonly maxEntries: number = DEFAULT_MAX_ENTRIES) {}

  add(entry: AccessLogEntry): void {
    this.entries.push(entry);
    // Trim in chunks: shifting one entry per request would be quadratic.
    if (this.entries.length > this.maxEntries + Math.ceil(this.maxEntries / 4)) {
      const excess = this.entries.length - this.maxEntries;
      this.entries.splice(0, excess);
      this.droppedCount += excess;
    }
  }

  /** Entries dropped to keep the log bounded. */
  get dropped(): number {
    return this.droppedCount;
  }

  find(q: LogQuery = {}): AccessLogEntry[] {
    return this.entries.filter(
      (e) =>
        (q.since === undefined || e.ts >= q.since) &&
        (q.route === undefined || e.route === q.route) &&
        (q.canary === undefined || e.canary === q.canary),
    );
  }

  /** Requests that arrived in the last `windowMs` before `now` (now − windowMs < ts ≤ now). */
  rate(now: number, windowMs: number, q: Omit<LogQuery, 'since'> = {}): Rate {
    let count = 0;
    // Newest entries are at the end: walk back until the window is left.
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const e = this.entries[i]!;
      if (e.ts <= now - windowMs) break;
      if (e.ts > now) continue;
      if ((q.route === undefined || e.route === q.route) && (q.canary === undefined || e.canary === q.canary)) count++;
    }
    return { count, windowMs, perSecond: windowMs > 0 ? (count * 1000) / windowMs : 0 };
  }
}

export function summarize(entries: readonly AccessLogEntry[]): LogSummary {
  const summary: LogSummary = { total: 0, canary: 0, production: 0, byStatus: {}, byServed: {}, byRoute: {} };
  for (const e of entries) {
    summary.total++;
    if (e.canary) summary.canary++;
    else summary.production++;
    summary.byStatus[String(e.status)] = (summary.byStatus[String(e.status)] ?? 0) + 1;
    summary.byServed[e.served] = (summary.byServed[e.served] ?? 0) + 1;
    summary.byRoute[e.route] = (summary.byRoute[e.route] ?? 0) + 1;
  }
  return summary;
}
