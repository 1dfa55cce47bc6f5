/**
 * Scripted traffic for one site, as request-outcome events through the real signal store: a healthy
 * 14-day baseline, then batches "now" whose mix the caller controls. Shared by the control-loop tests,
 * the history regeneration script and the sites benchmark, so all three feed the loop the same way.
 */
import { randomUUID } from 'node:crypto';
import { ingestEvents } from '../../server/db/signal-store';
import type { Pool } from '../../server/db/pool';
import type { RequestOutcomeEventInput } from '@target-health/crawler/events/event';

const DAY = 86_400_000;

/** The route of an event as sent (the schema's: country, pool, session). */
export type Route = NonNullable<RequestOutcomeEventInput['route']>;

export interface Mix {
  ok?: number;
  /** 403 without a page: hard blocks. */
  hard?: number;
  /** Challenge pages (explicit outcome, as a headless crawler reports them). */
  challenge?: number;
  /** 200 OK carrying a block page. */
  soft?: number;
  /** 200 OK pages whose extraction misses the price. */
  missing?: number;
  route?: Route;
}

type Kind = 'ok' | 'hard' | 'challenge' | 'soft' | 'missing';

function event(site: string, kind: Kind, ts: number, route: Route | undefined): Record<string, unknown> {
  // One latency for every event: the tests move refusal rates, not the latency signal.
  const base = { eventId: randomUUID(), ts, site, latencyMs: 150, ...(route ? { route } : {}) };
  switch (kind) {
    case 'ok':
      return { ...base, status: 200, bytes: 60_000, extraction: { result: 'ok', validRecords: 1 } };
    case 'hard':
      return { ...base, status: 403, bytes: 500 };
    case 'challenge':
      return { ...base, status: 403, outcome: 'challenge', outcomeReason: 'scripted: challenge page' };
    case 'soft':
      return { ...base, status: 200, outcome: 'soft_block', outcomeReason: 'scripted: block page with 200' };
    case 'missing':
      return {
        ...base,
        status: 200,
        bytes: 60_000,
        extraction: { result: 'missing_fields', missingFields: ['price'], validRecords: 0 },
      };
  }
}

export function eventsOf(site: string, mix: Mix, ts: (i: number) => number): Record<string, unknown>[] {
  const kinds: Kind[] = [];
  for (const k of ['ok', 'hard', 'challenge', 'soft', 'missing'] as const)
    for (let i = 0; i < (mix[k] ?? 0); i++) kinds.push(k);
  return kinds.map((k, i) => event(site, k, ts(i), mix.route));
}

export async function ingest(pool: Pool, events: Record<string, unknown>[]): Promise<void> {
  const result = await ingestEvents(pool, events);
  if (result.rejected.length > 0)
    throw new Error(`scripted events rejected: ${JSON.stringify(result.rejected.slice(0, 3))}`);
}

/** A healthy normal: `perRoute` requests per route spread over days −13..−2 (inside the baseline). */
export async function seedBaseline(
  pool: Pool,
  site: string,
  routes: Array<Route | undefined> = [undefined],
  perRoute = 600,
): Promise<void> {
  const now = Date.now();
  for (const route of routes) {
    await ingest(
      pool,
      eventsOf(
        site,
        { ok: perRoute, ...(route ? { route } : {}) },
        (i) => now - 2 * DAY - Math.floor(((i + 0.5) / perRoute) * 11 * DAY),
      ),
    );
  }
}

/**
 * Events "now" (or `agoMs` before), spread over the last second of the latest whole minute that has
 * passed: a tick judges whole minutes only (server/db/signal-store/read-windows.ts), so these count at once.
 */
export async function ingestNow(pool: Pool, site: string, mix: Mix, agoMs = 0): Promise<void> {
  const t = Math.floor((Date.now() - agoMs) / 60_000) * 60_000 - 1;
  await ingest(
    pool,
    eventsOf(site, mix, (i) => t - (i % 1000)),
  );
}
