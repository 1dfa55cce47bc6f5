/**
 * Failures that are not the site's attitude must not throttle it: a dead proxy pool is a route problem
 * (route alert, band untouched), a redesign that breaks the parser lowers parser health only (the
 * parser's owner is told, nothing is throttled). Real dev server, real PostgreSQL, real signal store.
 */
import { ParserHealth, HealthBand } from '../../loop/search-attributes';
import { controlAudit } from '../../server/db/controls';
import { listNotifications } from '../../server/db/notifications';
import { ingestNow, loopInput, prepareSite, startHealthySite, startLoop, waitForState } from '../kit/control-loop';
import { createTestWorker, eventually, openHarness, type TestHarness } from '../kit/services';

let h: TestHarness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => h.close());

const POOLS = [{ pool: 'pool-a' }, { pool: 'pool-b' }, { pool: 'pool-c' }];

test('a route-specific failure raises a route alert and leaves the band and the controls alone', async () => {
  const site = await prepareSite(h.pool, 'route', POOLS, 300);
  for (const route of POOLS) await ingestNow(h.pool, site, { ok: 100, route });
  const { worker, connection } = await createTestWorker(h);
  await worker.runUntil(async () => {
    // Smoothing at the product's ratio to route confirmation (half-life 5× the 2 s it takes, as 10 min
    // is to 2 min): until pool-c is confirmed its refusals count in the score, barely moving the band.
    const { handle, healthy } = await startHealthySite(
      h.client,
      h.taskQueue,
      loopInput(site, { scoring: { smoothing: { halfLifeMs: 10_000 }, routes: { confirmAfterMs: 2_000 } } }),
    );

    // pool-c dies: every request through it is refused (a fifth of the traffic); a and b are fine.
    await ingestNow(h.pool, site, { hard: 80, route: { pool: 'pool-c' } });
    const s = await waitForState(handle, 'route alert raised', (x) => x.alerts.route && x.tick >= healthy.tick + 3);
    expect(s.routeDiagnosis).toMatchObject({ verdict: 'route-specific', summary: expect.stringContaining('pool-c') });
    expect(s.reasons).toContain('route_specific');
    expect(s.band).toBe('healthy');
    expect(s.score).toBe(100);
    expect(s.controls).toMatchObject({ concurrencyLimit: 16, revisitMultiplier: 1, paused: false });
    expect((await handle.describe()).typedSearchAttributes.get(HealthBand)).toBe('healthy');
    await handle.terminate('test done');
  });
  await connection.close();

  // Only the first tick's nominal controls were ever written; the owner got one route alert.
  expect((await controlAudit(h.pool, site)).map((a) => a.newControls.band)).toEqual(['healthy']);
  const notes = await listNotifications(h.pool, site);
  expect(notes.map((n) => [n.kind, n.recipient])).toEqual([['route_alert', `owner@${site}`]]);
  expect(notes[0]!.payload).toMatchObject({
    evidence: { routes: { verdict: 'route-specific', suspects: [expect.objectContaining({ value: 'pool-c' })] } },
  });
});

test('a parser break lowers parser health only: the parser owner is told, nothing is throttled', async () => {
  const site = await prepareSite(h.pool, 'parser');
  await ingestNow(h.pool, site, { ok: 100 });
  const { worker, connection } = await createTestWorker(h);
  await worker.runUntil(async () => {
    const handle = await startLoop(h.client, h.taskQueue, loopInput(site));
    const healthy = await waitForState(handle, 'healthy', (s) => s.band === 'healthy' && s.parserHealth === 100);

    // A redesign: pages load fine (200 OK) but the price is gone from half of them.
    await ingestNow(h.pool, site, { missing: 100 });
    const s = await waitForState(handle, 'parser alert', (x) => x.alerts.parser && x.tick >= healthy.tick + 3);
    expect(s.parserHealth).toBeLessThan(80);
    expect(s.reasons).toContain('extraction_missing_fields');
    expect(s.score).toBe(100);
    expect(s.band).toBe('healthy');
    expect(s.controls).toMatchObject({
      concurrencyLimit: 16,
      revisitMultiplier: 1,
      paused: false,
      effectiveCostMultiplier: 1,
    });
    await eventually(async () => {
      const d = await handle.describe();
      return d.typedSearchAttributes.get(ParserHealth) === s.parserHealth &&
        d.typedSearchAttributes.get(HealthBand) === 'healthy'
        ? d
        : undefined;
    }, 'ParserHealth search attribute');
    await handle.terminate('test done');
  });
  await connection.close();

  expect((await controlAudit(h.pool, site)).length).toBe(1);
  const notes = await listNotifications(h.pool, site);
  expect(notes.map((n) => [n.kind, n.recipient])).toEqual([['parser_health', `parser@${site}`]]);
});
