/**
 * The walking skeleton on the real dev server and the real PostgreSQL: a site workflow ticks on a
 * durable timer, its activity reads the database, and the run is visible with its search attributes.
 */
import { randomUUID } from 'node:crypto';
import { workflowIdForSite } from '../../core/common/names';
import { HealthBand, TargetSite } from '../../loop/search-attributes';
import { upsertSite } from '../../server/db/sites';
import { SITE_HEALTH_WORKFLOW, type SiteHealthWorkflow, stateQuery } from '../../loop/messages';
import { createTestWorker, eventually, openHarness, type TestHarness } from '../kit/services';

let h: TestHarness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => h.close());

test('a site workflow ticks twice and reports what its activity read from PostgreSQL', async () => {
  const site = `skeleton-${randomUUID().slice(0, 8)}.example.com`;
  await upsertSite(h.pool, site, { owner: 'crawl-team@example.com' });
  const { worker, connection } = await createTestWorker(h);
  const workflowId = workflowIdForSite(site);

  const state = await worker.runUntil(async () => {
    const handle = await h.client.workflow.start<SiteHealthWorkflow>(SITE_HEALTH_WORKFLOW, {
      workflowId,
      taskQueue: h.taskQueue,
      args: [{ site, tickIntervalMs: 1_000 }],
    });
    // At least two ticks, seen between ticks (the last assessment is the state's tick). Not "exactly tick
    // 2": with 1 s ticks a query delayed on a busy machine can arrive after tick 3, and would wait for ever.
    const reached = await eventually(async () => {
      const s = await handle.query(stateQuery);
      return s.tick >= 2 && s.lastAssessment?.tick === s.tick ? s : undefined;
    }, 'two ticks');
    const described = await handle.describe();
    expect(described.typedSearchAttributes.get(TargetSite)).toBe(site);
    expect(described.typedSearchAttributes.get(HealthBand)).toBe('learning');
    await handle.terminate('test done');
    return reached;
  });
  await connection.close();

  // What the activity read from PostgreSQL: the site's registration (a new site: learning), and both ticks' rows.
  expect(state.lastAssessment).toMatchObject({
    tick: state.tick,
    site: { registered: true, owner: 'crawl-team@example.com' },
    assessment: { state: 'learning' },
  });
  const { rows } = await h.pool.query<{ tick: string }>('SELECT tick FROM assessments WHERE site = $1 ORDER BY tick', [
    site,
  ]);
  expect(rows.map((r) => Number(r.tick))).toEqual(expect.arrayContaining([1, 2]));
});
