/**
 * Incidents written to order into a scenario's traffic: inside chosen stretches of time an event becomes a
 * Cloudflare block or challenge page (the scenarios' own, core/scenarios/pages.ts) with probabilities that may
 * change over the stretch (a blip, a ramp), and the others slow down if asked. Which events turn is decided by a
 * hash of their id, so the same script gives the same traffic. Used by the tests' scripted sites
 * (test/kit/scripted-incidents.ts) and `npm run bench:tune`.
 */
import { createHash } from 'node:crypto';
import { type PageContext, renderPage } from '../../core/scenarios/pages';
import { Rng } from '../../core/scenarios/rng';

/**
 * From `from` to `to` (epoch ms) an event is a Cloudflare block page (a hard block) with probability `hard(t)`, else a
 * Cloudflare challenge with probability `challenge(t)` (default none).
 */
export interface Stretch {
  from: number;
  to: number;
  hard: (t: number) => number;
  challenge?: (t: number) => number;
  /** The other events' latency times this (default 1): a site slowing down while it refuses. */
  slow?: (t: number) => number;
}

/** A number in [0, 1) from the event's id: the same id, the same coin. */
function coin(id: string): number {
  return createHash('sha256').update(id).digest().readUInt32BE(0) / 2 ** 32;
}

/** The event as the stretches make it (itself when none covers it), and whether it became a block or challenge. */
export function stretchEvent(
  event: { eventId?: string; ts: string | number },
  site: string,
  stretches: readonly Stretch[],
): { event: object; blocked: boolean } {
  const e = event as Record<string, unknown> & { eventId?: string; ts: string | number };
  const t = typeof e.ts === 'number' ? e.ts : Date.parse(e.ts);
  const s = stretches.find((x) => t >= x.from && t < x.to);
  if (s === undefined) return { event: e, blocked: false };
  const c = coin(e.eventId ?? String(e.ts));
  const hard = s.hard(t);
  const kind = c < hard ? 'cloudflare-block' : c < hard + (s.challenge?.(t) ?? 0) ? 'cloudflare-challenge' : null;
  if (kind === null) {
    const slow = s.slow?.(t) ?? 1;
    return { event: slow === 1 ? e : { ...e, latencyMs: Math.round((e.latencyMs as number) * slow) }, blocked: false };
  }
  const { extraction: _x, status: _s, networkError: _n, headers: _h, bodySample: _b, bytes: _y, ...rest } = e;
  const route = e.route as { country?: string } | undefined;
  const page = renderPage(kind, new Rng(Math.floor(c * 2 ** 32)), {
    host: site,
    pageType: e.pageType as PageContext['pageType'],
    path: '/',
    country: route?.country ?? 'US',
    ts: t,
  });
  return {
    event: { ...rest, status: page.status, bytes: page.bytes, headers: page.headers, bodySample: page.bodySample },
    blocked: true,
  };
}
