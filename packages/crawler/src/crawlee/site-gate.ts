/**
 * A per-site concurrency gate: Crawlee limits concurrency per crawler, not per domain, so the adapter
 * holds at most `limit` requests in flight against each site. A request waits for a free place at most
 * `maxWaitMs` (woken when a place frees, never by polling) and is then told no, so a crawler slot is
 * never held indefinitely; the caller defers the request instead.
 */
interface Waiter {
  limit: number;
  admit: () => void;
}

interface SiteState {
  inFlight: number;
  waiters: Waiter[];
}

export interface GateAcquireResult {
  admitted: boolean;
  /** True when the request had to wait for a place (admitted or not). */
  waited: boolean;
}

export class SiteGate {
  private readonly sites = new Map<string, SiteState>();

  /** Requests in flight against a site now. */
  inFlight(site: string): number {
    return this.sites.get(site)?.inFlight ?? 0;
  }

  /**
   * Takes a place for `site` if fewer than `limit` are taken, else waits up to `maxWaitMs` for one.
   * `limit` is read per call: the controls may lower or raise it while requests are in flight.
   */
  async acquire(site: string, limit: number, maxWaitMs: number): Promise<GateAcquireResult> {
    const state = this.state(site);
    if (state.inFlight < limit && state.waiters.length === 0) {
      state.inFlight += 1;
      return { admitted: true, waited: false };
    }
    if (maxWaitMs <= 0 || limit <= 0) return { admitted: false, waited: false };
    const admitted = await new Promise<boolean>((resolve) => {
      const waiter: Waiter = {
        limit,
        admit: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        state.waiters = state.waiters.filter((w) => w !== waiter);
        resolve(false);
        // A waiter leaving may unblock one behind it with a higher limit.
        this.wake(site, state);
      }, maxWaitMs);
      state.waiters.push(waiter);
    });
    return { admitted, waited: true };
  }

  /** Gives a place back; the first waiter (if its limit allows) takes it. */
  release(site: string): void {
    const state = this.sites.get(site);
    if (!state || state.inFlight === 0) return;
    state.inFlight -= 1;
    this.wake(site, state);
  }

  private wake(site: string, state: SiteState): void {
    while (state.waiters.length > 0 && state.inFlight < state.waiters[0]!.limit) {
      state.inFlight += 1;
      state.waiters.shift()!.admit();
    }
    if (state.inFlight === 0 && state.waiters.length === 0) this.sites.delete(site);
  }

  private state(site: string): SiteState {
    let state = this.sites.get(site);
    if (!state) {
      state = { inFlight: 0, waiters: [] };
      this.sites.set(site, state);
    }
    return state;
  }
}
