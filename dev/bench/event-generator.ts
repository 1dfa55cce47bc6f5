/**
 * Synthetic crawler traffic for the benchmarks: deterministic (seeded), realistic in shape — several
 * routes, a few percent blocks and challenges, latencies with a long tail, extraction results.
 */
export interface GeneratorOptions {
  site: string;
  /** Epoch ms of the first and last event. */
  from: number;
  to: number;
  count: number;
  seed?: number;
  /** Give every event an id (what the recorder does), for idempotent retries. */
  ids?: boolean;
}

const ROUTES = [
  { country: 'DE', pool: 'residential-eu', session: 'sticky-10m' },
  { country: 'FR', pool: 'residential-eu', session: 'sticky-10m' },
  { country: 'US', pool: 'residential-us', session: 'rotating' },
  { country: 'US', pool: 'datacenter-us', session: 'rotating' },
  { country: 'GB', pool: 'residential-eu', session: 'rotating' },
  { country: 'JP', pool: 'mobile-apac', session: 'sticky-30m' },
];
const PAGE_TYPES = ['product', 'listing', 'search'];

export function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

export function* generateEvents(o: GeneratorOptions): Generator<Record<string, unknown>> {
  const rand = lcg(o.seed ?? 1);
  const span = o.to - o.from;
  for (let i = 0; i < o.count; i++) {
    const r = rand();
    const status = r < 0.02 ? 403 : r < 0.03 ? 429 : r < 0.035 ? 503 : 200;
    const ok = status === 200;
    const records = ok ? 1 + Math.floor(rand() * 20) : 0;
    yield {
      ...(o.ids ? { eventId: `${o.site}-${o.seed ?? 1}-${i}` } : {}),
      ts: o.from + Math.floor((span * i) / o.count),
      site: o.site,
      route: ROUTES[Math.floor(rand() * ROUTES.length)],
      pageType: PAGE_TYPES[Math.floor(rand() * PAGE_TYPES.length)],
      status,
      latencyMs: Math.round(80 + 400 * rand() ** 4 * (rand() < 0.05 ? 10 : 1)),
      bytes: ok ? 40_000 + Math.floor(rand() * 120_000) : 1_500,
      retries: rand() < 0.1 ? 1 : 0,
      credits: 1,
      extraction: ok ? { result: 'ok', validRecords: records } : { result: 'empty' },
    };
  }
}
