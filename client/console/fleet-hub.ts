/**
 * The Fleet page's live updates (docs/console.md, "Live updates"), one hub per API process shared by every open
 * stream: while at least one is open it re-reads the whole fleet (server/fleet/read-fleet.ts, the reader of the
 * page and of `target-health sites`) every REFRESH_MS, and soon after a site's controls change (the controls
 * feed: PostgreSQL NOTIFY, server/api/controls-feed.ts); with none open it reads nothing. Each stream gets its
 * own filters applied to that one read, rendered on the server (pages/fleet.ts `fleetResults`), and is sent the
 * HTML only when it differs from what it was sent last. Each refresh also checks, in one query and without
 * touching them, that the streams' sessions are live: a stream whose session ended (expired, signed out,
 * token revoked) is told so and closed.
 */
import type { Logger } from '../../server/logging/logger';
import { buildFleet, type Fleet } from '../../server/fleet/fleet';
import type { SseConnection } from '../../server/api/sse';
import { fleetResults } from './pages/fleet';

/** How often an open stream's fleet is re-read: the scores of the loops' ticks arrive this way. */
export const REFRESH_MS = 5_000;
/** After a control change, the re-read waits this long for others of the same burst. */
const CHANGE_DEBOUNCE_MS = 200;

export interface FleetStream {
  sse: SseConnection;
  filter: Fleet['filter'];
  /** The hash of the session's id in hex (client/console/session-rules.ts), to check it is still live. */
  sessionHash: string;
  /** The HTML last sent, so an unchanged fleet sends nothing. */
  last?: string;
  seq: number;
}

export interface FleetHubDeps {
  /** The whole fleet, unfiltered. */
  readAll: () => Promise<Fleet>;
  /** Which of these session hashes are live. */
  liveSessions: (hashes: readonly string[]) => Promise<Set<string>>;
  /** Subscribes to control changes; returns the unsubscribe function. */
  onControlsChange: (listener: () => void) => () => void;
  logger: Logger;
  refreshMs?: number;
  now?: () => Date;
}

/** One stream's view of the whole fleet: its filters applied, the trends kept (pure). */
export function narrowFleet(all: Fleet, filter: Fleet['filter'], now: Date): Fleet {
  const trends = new Map(all.sites.map((s) => [s.site, s.trend]));
  const narrowed = buildFleet(all.sites, filter, now);
  return {
    ...narrowed,
    sites: narrowed.sites.map((s) => ({ ...s, trend: trends.get(s.site) ?? null })),
    trend: all.trend,
  };
}

export class FleetHub {
  private readonly streams = new Set<FleetStream>();
  private timer: NodeJS.Timeout | undefined;
  private changeTimer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private running: Promise<void> | null = null;
  private again = false;
  /** Whole-fleet reads made (the tests and docs: one per refresh, whatever the number of streams). */
  reads = 0;

  constructor(private readonly deps: FleetHubDeps) {}

  get size(): number {
    return this.streams.size;
  }

  /** Adds a stream and sends it the fleet at once; the first stream starts the refreshes. */
  add(stream: FleetStream): void {
    this.streams.add(stream);
    if (this.streams.size === 1) this.start();
    this.refresh();
  }

  remove(stream: FleetStream): void {
    if (!this.streams.delete(stream)) return;
    if (this.streams.size === 0) this.stop();
  }

  /** Ends every stream (the server is closing). */
  close(): void {
    for (const s of [...this.streams]) s.sse.end();
    this.streams.clear();
    this.stop();
  }

  /** A refresh now, or right after the one running. */
  refresh(): void {
    if (this.running !== null) {
      this.again = true;
      return;
    }
    this.running = this.once()
      .catch((err: unknown) =>
        this.deps.logger.warn(
          { err: err instanceof Error ? err.message : String(err) },
          'console fleet stream: refresh failed; retrying at the next one',
        ),
      )
      .finally(() => {
        this.running = null;
        if (this.again && this.streams.size > 0) {
          this.again = false;
          this.refresh();
        }
      });
  }

  private start(): void {
    this.timer = setInterval(() => this.refresh(), this.deps.refreshMs ?? REFRESH_MS);
    this.timer.unref();
    this.unsubscribe = this.deps.onControlsChange(() => {
      if (this.changeTimer !== undefined) return;
      this.changeTimer = setTimeout(() => {
        this.changeTimer = undefined;
        this.refresh();
      }, CHANGE_DEBOUNCE_MS);
      this.changeTimer.unref();
    });
  }

  private stop(): void {
    clearInterval(this.timer);
    clearTimeout(this.changeTimer);
    this.timer = undefined;
    this.changeTimer = undefined;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  private async once(): Promise<void> {
    const streams = [...this.streams].filter((s) => !s.sse.closed);
    if (streams.length === 0) return;
    const [live, all] = await Promise.all([
      this.deps.liveSessions([...new Set(streams.map((s) => s.sessionHash))]),
      (this.reads++, this.deps.readAll()),
    ]);
    const now = this.deps.now?.() ?? new Date();
    for (const s of streams) {
      if (s.sse.closed) continue;
      if (!live.has(s.sessionHash)) {
        s.sse.event('end', ++s.seq, JSON.stringify({ why: 'Your session ended (signed out or expired).' }));
        s.sse.end();
        continue;
      }
      const html = fleetResults({ fleet: narrowFleet(all, s.filter, now), now }).text;
      if (html === s.last) continue;
      s.last = html;
      s.sse.event('fleet', ++s.seq, JSON.stringify({ html }));
    }
  }
}
