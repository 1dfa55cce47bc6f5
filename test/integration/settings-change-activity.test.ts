/**
 * The live-reconfiguration activity is at-least-once like the loop's others: run twice (a retry after the
 * first attempt committed) and twice at the same time (a zombie attempt), on the real PostgreSQL, it
 * records the change once, sets the owners once and answers the same; a change of nothing writes nothing.
 */
import { makeRecordSettingsChange, type RecordSettingsChangeInput } from '../../activities/record-settings-change';
import { siteHealthConfigSchema } from '../../core/control/config';
import { settingsChangeKey } from '../../core/control/keys';
import { listSettingsChanges } from '../../server/db/settings-changes';
import { findSite } from '../../server/db/sites';
import { newSite, registerSite } from '../kit/control-loop';
import { openHarness, testLogger, type TestHarness } from '../kit/services';

let h: TestHarness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => h.close());

const record = () => makeRecordSettingsChange({ pool: h.pool, logger: testLogger });

function input(site: string, n: number, o: Partial<RecordSettingsChangeInput> = {}): RecordSettingsChangeInput {
  return {
    site,
    workflowId: `site-health:${site}`,
    chainId: 'chain-1',
    changeKey: settingsChangeKey(site, 'chain-1', n),
    who: 'alice@example.com',
    why: 'fewer reads',
    changes: [{ field: 'tickIntervalMs', old: 60_000, new: 30_000 }],
    settings: siteHealthConfigSchema().parse({ site, tickIntervalMs: 30_000 }),
    owners: { owner: 'night@example.com' },
    ...o,
  };
}

test('a retried or concurrent attempt records the change once and answers the same', async () => {
  const site = newSite('settings-act');
  await registerSite(h.pool, site);
  const first = await record()(input(site, 1));
  expect(first.changes).toEqual([
    { field: 'tickIntervalMs', old: 60_000, new: 30_000 },
    { field: 'owner', old: `owner@${site}`, new: 'night@example.com' },
  ]);
  expect(first.changedAt).not.toBeNull();
  // Retries: the owner is already the new one, yet the answer is the first attempt's.
  const [second, third] = await Promise.all([record()(input(site, 1)), record()(input(site, 1))]);
  expect(second).toEqual(first);
  expect(third).toEqual(first);
  const rows = await listSettingsChanges(h.pool, site);
  expect(rows).toHaveLength(1);
  expect(rows[0]).toMatchObject({
    changeKey: input(site, 1).changeKey,
    who: 'alice@example.com',
    why: 'fewer reads',
    changes: first.changes,
  });
  expect(await findSite(h.pool, site)).toMatchObject({ owner: 'night@example.com', parserOwner: `parser@${site}` });
});

test('two attempts of a new change at the same time: one row, one answer', async () => {
  const site = newSite('settings-race');
  await registerSite(h.pool, site);
  const [a, b] = await Promise.all([
    record()(input(site, 1, { owners: { parserOwner: 'p2@example.com' } })),
    record()(input(site, 1, { owners: { parserOwner: 'p2@example.com' } })),
  ]);
  expect(a).toEqual(b);
  expect(a.changes.map((c) => c.field)).toEqual(['tickIntervalMs', 'parserOwner']);
  expect(await listSettingsChanges(h.pool, site)).toHaveLength(1);
});

test('a change of nothing (same owner, no settings) writes nothing', async () => {
  const site = newSite('settings-none');
  await registerSite(h.pool, site);
  const r = await record()(input(site, 1, { changes: [], owners: { owner: `owner@${site}` } }));
  expect(r).toEqual({ changedAt: null, changes: [] });
  expect(await listSettingsChanges(h.pool, site)).toEqual([]);
});
