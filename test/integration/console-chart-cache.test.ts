/**
 * The Site page's chart cache (client/console/chart-cache.ts) on the real API, PostgreSQL and the dev server: a
 * reload that finds the same data draws nothing and shows the same chart; a new tick, new traffic and a decision
 * (with its control change) each give another chart — the one an uncached drawing of the data read at that
 * moment gives, so nothing stale is shown. The loop ticks every 10 minutes here, so between its first tick and
 * the test's end only the test changes what the chart reads.
 */
import { randomUUID } from 'node:crypto';
import { workflowIdForSite } from '../../core/common/names';
import { siteCharts } from '../../client/console/chart-cache';
import { readSitePage, type SitePageData } from '../../client/console/site-read';
import { recordAssessmentOnce } from '../../server/db/assessments';
import { readChartData } from '../../tools/charts/read-history';
import { renderSvg } from '../../tools/charts/render';
import { buildChartSpec } from '../../tools/charts/spec';
import { type ApiHarness, authed, openApiHarness, type TestApi } from '../kit/api';
import { ingestNow, loopInput, prepareSite, startLoop, terminateLoop, waitForState } from '../kit/control-loop';
import { eventually, type TestHarness } from '../kit/services';

const MINUTE = 60_000;
const DAY = 86_400_000;
const ROUTES = [{ country: 'de', pool: 'dc-1' }];

let harness: ApiHarness;
let h: TestHarness;
let api: TestApi;
let site: string;

beforeAll(async () => {
  harness = await openApiHarness();
  ({ h, api } = harness);
  site = await prepareSite(h.pool, `chart-cache-${randomUUID().slice(0, 6)}`, ROUTES, 300);
  await ingestNow(h.pool, site, { ok: 50, route: ROUTES[0] });
  const handle = await startLoop(h.client, h.taskQueue, loopInput(site, { tickIntervalMs: 10 * MINUTE }));
  await waitForState(handle, 'its first tick', (s) => s.lastAssessedAt !== null);
}, 240_000);

afterAll(async () => {
  await terminateLoop(h.client, site);
  await harness?.close();
});

const page = async (now: Date): Promise<string> => {
  const data: SitePageData | null = await readSitePage({ client: h.client, pool: h.pool }, site, '1d', now);
  if (data === null || !('svg' in data.chart)) throw new Error(`no chart: ${JSON.stringify(data?.chart)}`);
  return data.chart.svg;
};

/** The chart drawn without the cache from the data read now, over the page's range (to the end of now's minute). */
const uncached = async (now: Date): Promise<string> => {
  const to = Math.ceil(now.getTime() / MINUTE) * MINUTE;
  return renderSvg(buildChartSpec((await readChartData(h.pool, site, to - DAY, to)).data));
};

test('a reload draws nothing; a tick, traffic and a decision each show what an uncached drawing shows', async () => {
  // A "now" ahead of every change the test makes, so each lands inside the chart's range.
  const now = new Date(Date.now() + 2 * MINUTE);
  const counts = (): { draws: number; hits: number } => ({ draws: siteCharts.draws, hits: siteCharts.hits });
  const before = counts();
  const first = await page(now);
  expect(await page(now)).toBe(first);
  expect(counts()).toEqual({ draws: before.draws + 1, hits: before.hits + 1 });
  expect(first).toBe(await uncached(now));

  // A tick, as the assessment activity writes it, with a score far from the healthy ones.
  await recordAssessmentOnce(h.pool, {
    assessmentKey: `chart-cache-${randomUUID()}`,
    site,
    workflowId: workflowIdForSite(site),
    tick: 1_000,
    assessedAt: new Date(Date.now() - 10_000),
    result: { assessment: { state: 'scored', reasons: [], health: { score: 3 }, parser: { score: 100 } } },
  });
  const afterTick = await page(now);
  expect(afterTick).not.toBe(first);
  expect(afterTick).toBe(await uncached(now));
  expect(counts().draws).toBe(before.draws + 2);

  // Traffic: the rates panel.
  await ingestNow(h.pool, site, { ok: 20, hard: 20, route: ROUTES[0] });
  const afterTraffic = await page(now);
  expect(afterTraffic).not.toBe(afterTick);
  expect(afterTraffic).toBe(await uncached(now));

  // A decision through the API: its mark and the control change it makes.
  const decider = await api.token(['decide']);
  const paused = await fetch(
    `${api.url}/v1/sites/${site}/decisions`,
    authed(decider, {
      method: 'POST',
      body: JSON.stringify({ kind: 'pause', why: 'chart cache test' }),
      headers: { 'content-type': 'application/json' },
    }),
  );
  expect(paused.status).toBe(200);
  // Its writes (the decision, the loop's control change, its notice) land over a moment: the page must come to
  // show the chart drawn from all of them, which a chart kept from before any of them would never be.
  const afterDecision = await eventually(async () => {
    const svg = await page(now);
    return svg !== afterTraffic && svg === (await uncached(now)) ? svg : undefined;
  }, 'the decision on the chart');
  expect(afterDecision).toMatch(/pause/i);
  const drawsNow = counts().draws;
  expect(await page(now)).toBe(afterDecision);
  expect(counts().draws).toBe(drawsNow);
});
