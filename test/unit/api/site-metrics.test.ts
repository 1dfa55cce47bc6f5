/**
 * The per-site gauges (server/api/site-metrics.ts) as Prometheus text, from given snapshots: the band as a
 * state set, a gone site disappearing, a source that could not be read leaving its gauges out (not
 * zeros); and the snapshot reader's cache (server/api/site-snapshot.ts): concurrent scrapes share one read,
 * a new read after the cache period, a failing source reported and left out.
 */
import type { Client } from '@temporalio/client';
import { Registry } from 'prom-client';
import type { Pool } from '../../../server/db/pool';
import { registerSiteGauges } from '../../../server/api/site-metrics';
import { createSnapshotReader, type SiteSnapshot } from '../../../server/api/site-snapshot';

const facts = {
  band: 'resisting',
  score: 31,
  parserHealth: 92,
  lastAssessmentAgeSeconds: 12.5,
  tickIntervalSeconds: 60,
};

function gaugesOver(snapshots: SiteSnapshot[]): () => Promise<string[]> {
  const registry = new Registry();
  let i = 0;
  let current = snapshots[0]!;
  registerSiteGauges(registry, () => Promise.resolve(current));
  return async () => {
    current = snapshots[Math.min(i++, snapshots.length - 1)]!;
    return (await registry.metrics()).split('\n').filter((l) => l !== '' && !l.startsWith('#'));
  };
}

test('every gauge of a site, the band as a state set', async () => {
  const scrape = gaugesOver([
    {
      stored: new Map([['a.example', facts]]),
      loops: new Map([['a.example', { band: 'resisting', smoothedScore: 35, awaitingHuman: true }]]),
    },
  ]);
  expect(await scrape()).toEqual([
    'th_site_score{site="a.example"} 31',
    'th_site_smoothed_score{site="a.example"} 35',
    'th_site_band{site="a.example",band="learning"} 0',
    'th_site_band{site="a.example",band="healthy"} 0',
    'th_site_band{site="a.example",band="degrading"} 0',
    'th_site_band{site="a.example",band="resisting"} 1',
    'th_site_band{site="a.example",band="stopped"} 0',
    'th_site_parser_health{site="a.example"} 92',
    'th_site_awaiting_human{site="a.example"} 1',
    'th_site_loop_running{site="a.example"} 1',
    'th_site_last_assessment_age_seconds{site="a.example"} 12.5',
    'th_site_tick_interval_seconds{site="a.example"} 60',
    'th_site_metrics_source_up{source="postgres"} 1',
    'th_site_metrics_source_up{source="temporal"} 1',
  ]);
});

test("the controls band wins over the loop's; a site without a score or a loop has only what is known", async () => {
  const scrape = gaugesOver([
    {
      stored: new Map([
        ['gone.example', { ...facts, band: 'stopped', tickIntervalSeconds: null }],
        [
          'new.example',
          { band: null, score: null, parserHealth: null, lastAssessmentAgeSeconds: null, tickIntervalSeconds: null },
        ],
      ]),
      loops: new Map([['new.example', { band: 'learning', smoothedScore: null, awaitingHuman: false }]]),
    },
  ]);
  const lines = await scrape();
  expect(lines).toContain('th_site_band{site="gone.example",band="stopped"} 1');
  expect(lines).toContain('th_site_loop_running{site="gone.example"} 0');
  expect(lines).toContain('th_site_band{site="new.example",band="learning"} 1');
  expect(lines).toContain('th_site_awaiting_human{site="new.example"} 0');
  expect(
    lines.filter(
      (l) => l.includes('new.example') && /^th_site_(score|smoothed_score|parser_health|tick_interval)/.test(l),
    ),
  ).toEqual([]);
  expect(lines.some((l) => l.startsWith('th_site_tick_interval_seconds{site="gone.example"}'))).toBe(false);
});

test('a site that is gone disappears at the next scrape; an unreadable source leaves its gauges out', async () => {
  const scrape = gaugesOver([
    {
      stored: new Map([['a.example', facts]]),
      loops: new Map([['a.example', { band: 'resisting', smoothedScore: 35, awaitingHuman: true }]]),
    },
    { stored: new Map([['b.example', facts]]), loops: null },
  ]);
  await scrape();
  const second = await scrape();
  expect(second.filter((l) => l.includes('a.example'))).toEqual([]);
  expect(second).toContain('th_site_score{site="b.example"} 31');
  // Temporal unreadable: no smoothed score, no awaiting, no running flag — rather than false zeros.
  expect(second.filter((l) => /^th_site_(smoothed_score|awaiting_human|loop_running)/.test(l))).toEqual([]);
  expect(second).toContain('th_site_metrics_source_up{source="temporal"} 0');
  expect(second).toContain('th_site_metrics_source_up{source="postgres"} 1');
});

describe('the snapshot reader', () => {
  // A pure unit's collaborators: a pool and a Temporal client that count their reads.
  function sources(opts: { pgFails?: boolean } = {}) {
    const counts = { pg: 0, temporal: 0 };
    const pool = {
      query: () => {
        counts.pg++;
        return opts.pgFails
          ? Promise.reject(new Error('connect ECONNREFUSED'))
          : Promise.resolve({
              rows: [
                {
                  site: 'a.example',
                  band: 'healthy',
                  score: 90,
                  parser_health: 100,
                  age_seconds: 3,
                  interval_seconds: 60,
                },
              ],
            });
      },
    } as unknown as Pool;
    const client = {
      workflow: {
        list: () => {
          counts.temporal++;
          return (async function* () {})();
        },
      },
    } as unknown as Client;
    return { counts, pool, temporal: () => Promise.resolve(client) };
  }

  test('concurrent reads share one; a new one after the cache period', async () => {
    const s = sources();
    let now = 1_000;
    const read = createSnapshotReader({ pool: s.pool, temporal: s.temporal, cacheMs: 5_000, now: () => now });
    const [a, b] = await Promise.all([read(), read()]);
    expect(a).toBe(b);
    expect(a.stored!.get('a.example')).toEqual({
      band: 'healthy',
      score: 90,
      parserHealth: 100,
      lastAssessmentAgeSeconds: 3,
      tickIntervalSeconds: 60,
    });
    expect(a.loops!.size).toBe(0);
    now += 4_999;
    await read();
    expect(s.counts).toEqual({ pg: 1, temporal: 1 });
    now += 1;
    await read();
    expect(s.counts).toEqual({ pg: 2, temporal: 2 });
  });

  test('a failing source is reported and read as null, the other still read', async () => {
    const s = sources({ pgFails: true });
    const errors: string[] = [];
    const read = createSnapshotReader({
      pool: s.pool,
      temporal: s.temporal,
      onError: (source, err) => errors.push(`${source}: ${(err as Error).message}`),
    });
    const snapshot = await read();
    expect(snapshot.stored).toBeNull();
    expect(snapshot.loops).not.toBeNull();
    expect(errors).toEqual(['postgres: connect ECONNREFUSED']);
  });

  test('a source that does not answer times out', async () => {
    const s = sources();
    const errors: string[] = [];
    const read = createSnapshotReader({
      pool: s.pool,
      temporal: () => new Promise<Client>(() => undefined),
      timeoutMs: 50,
      onError: (source, err) => errors.push(`${source}: ${(err as Error).message}`),
    });
    expect((await read()).loops).toBeNull();
    expect(errors).toEqual(['temporal: no answer in 50 ms']);
  });
});
