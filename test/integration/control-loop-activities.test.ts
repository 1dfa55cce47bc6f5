/**
 * The loop's activities are at-least-once: each is run here twice (a retry after the first attempt
 * committed but its answer was lost) and twice at the same time (a zombie attempt still running), on
 * the real PostgreSQL and signal store. The second run must change nothing and answer the same.
 */
import { createActivities } from '../../activities';
import type { ApplyActionsInput } from '../../activities/apply-actions';
import { controlAudit, readControls } from '../../server/db/controls';
import { listDecisions } from '../../server/db/decisions';
import { listNotifications } from '../../server/db/notifications';
import { scoringConfigSchema } from '../../core/scoring/config';
import { nominalControls, actionPolicySchema, degradeStep } from '../../core/control/controls';
import { initialLoopState } from '../../core/control/loop-state';
import { buildEvidence } from '../../core/control/notices';
import { windowConfigSchema } from '../../core/control/config';
import { ingestNow, newSite, prepareSite, registerSite } from '../kit/control-loop';
import { openHarness, testLogger, type TestHarness } from '../kit/services';

let h: TestHarness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => h.close());

const policy = actionPolicySchema().parse({});
const logged: Array<Record<string, unknown>> = [];
const acts = () =>
  createActivities({
    pool: h.pool,
    logger: testLogger,
    uiUrl: 'http://ui.test',
    consoleUrl: 'https://health.test',
    notifier: { channels: [{ name: 'log', send: (p) => (logged.push({ key: p.key }), Promise.resolve()) }] },
  });

test('assessSite: a retried tick returns the recorded assessment, at the same tick time, one row', async () => {
  const site = await prepareSite(h.pool, 'act');
  await ingestNow(h.pool, site, { ok: 80, hard: 20 });
  const input = {
    site,
    workflowId: `site-health:${site}`,
    chainId: 'chain-1',
    tick: 7,
    window: windowConfigSchema().parse({}),
    scoring: scoringConfigSchema().parse({}),
    previousRefusal: 0,
    evidenceSince: null,
    asOf: new Date().toISOString(),
  };
  const first = await acts().assessSite(input);
  // More traffic arrives between the attempts: the retry must not re-judge the tick.
  await ingestNow(h.pool, site, { hard: 100 });
  const [second, third] = await Promise.all([acts().assessSite(input), acts().assessSite(input)]);
  expect(second).toEqual(first);
  expect(third).toEqual(first);
  expect(first.assessment.state).toBe('scored');
  expect(first.assessment.health.window.requests).toBe(100);
  const { rows } = await h.pool.query<{ n: string; score: number }>(
    'SELECT count(*) AS n, min(score) AS score FROM assessments WHERE site = $1',
    [site],
  );
  expect(Number(rows[0]!.n)).toBe(1);
  expect(rows[0]!.score).toBe(first.assessment.health.score);
});

function actionInput(site: string, tick: number, withDecision = false): ApplyActionsInput {
  const state = { ...initialLoopState('chain-2'), tick, controls: nominalControls(policy, 'healthy', 'initial') };
  const next = degradeStep(state.controls, policy, 1.5, `degrading at tick ${tick}`);
  return {
    site,
    workflowId: `site-health:${site}`,
    chainId: 'chain-2',
    actionKey: `${site}/chain-2/${tick}/controls`,
    assessmentKey: `${site}/chain-2/${tick}`,
    actor: withDecision ? 'human:erin@example.com' : 'control-loop',
    controls: {
      next,
      description: 'step',
      routeDiagnosis: {
        verdict: 'site-wide',
        summary: 'no route stands out',
        suspects: [],
        excluded: { requests: 0, hardBlocks: 0, challenges: 0, softBlocks: 0 },
        suspectShare: 0,
        testedGroups: 2,
      },
    },
    decision: withDecision
      ? {
          decisionKey: `${site}/chain-2/decision/1`,
          kind: 'pause',
          who: 'erin@example.com',
          why: 'checking',
          mode: null,
          via: 'update',
          assessmentKey: `${site}/chain-2/${tick}`,
          awaitingSince: null,
        }
      : null,
    notices: [
      {
        key: `${site}/chain-2/${tick}/notify-degrading`,
        draft: {
          kind: 'degrading',
          severity: 'warning',
          audience: 'owner',
          title: 't',
          text: 'x',
          evidence: buildEvidence(state, null),
        },
      },
    ],
  };
}

test('applyActions: run again after it committed, it changes nothing and answers the same', async () => {
  const site = newSite('act');
  await registerSite(h.pool, site);
  const input = actionInput(site, 3, true);
  const first = await acts().applyActions(input);
  const second = await acts().applyActions(input);
  expect(second).toEqual(first);
  expect(first).toMatchObject({
    controlsChanged: true,
    controlsVersion: 1,
    notificationKeys: [`${site}/chain-2/3/notify-degrading`],
  });
  expect(await controlAudit(h.pool, site)).toHaveLength(1);
  expect(await listDecisions(h.pool, site)).toHaveLength(1);
  expect(await listNotifications(h.pool, site)).toHaveLength(1);
  expect(await readControls(h.pool, site)).toMatchObject({
    version: 1,
    concurrencyLimit: 12,
    revisitMultiplier: 1.5,
    routeDiagnosis: { verdict: 'site-wide' },
  });
  const n = (await listNotifications(h.pool, site))[0]!;
  expect(n.recipient).toBe(`owner@${site}`);
  expect(n.payload).toMatchObject({
    link: `http://ui.test/namespaces/default/workflows/${encodeURIComponent(`site-health:${site}`)}`,
    // The site's page in the console; a degrading notice opens no incident, so no review link.
    consoleLink: `https://health.test/console/sites/${encodeURIComponent(site)}`,
    reviewLink: null,
  });
});

test('applyActions: two attempts at once (a zombie still running) apply the action once', async () => {
  const site = newSite('act');
  await registerSite(h.pool, site);
  const input = actionInput(site, 4);
  const results = await Promise.allSettled([
    acts().applyActions(input),
    acts().applyActions(input),
    acts().applyActions(input),
  ]);
  // At least one succeeds; any loser failed on the audit key (and is retried by Temporal, finding it done).
  expect(results.some((r) => r.status === 'fulfilled')).toBe(true);
  const retried = await acts().applyActions(input);
  expect(retried.controlsChanged).toBe(true);
  const audit = await controlAudit(h.pool, site);
  expect(audit).toHaveLength(1);
  expect(await readControls(h.pool, site)).toMatchObject({ version: 1, concurrencyLimit: 12 });
  expect(await listNotifications(h.pool, site)).toHaveLength(1);
});

test('deliverNotification: each channel gets a notification once, however often delivery runs', async () => {
  const site = newSite('act');
  await registerSite(h.pool, site);
  const input = actionInput(site, 5);
  await acts().applyActions(input);
  const key = input.notices[0]!.key;
  logged.length = 0;
  const a = acts();
  await a.deliverNotification({ notificationKey: key });
  await a.deliverNotification({ notificationKey: key });
  expect(logged.filter((l) => l.key === key)).toHaveLength(1);
  const [n] = await listNotifications(h.pool, site);
  expect(n).toMatchObject({ channels: { log: 'delivered' }, attempts: 2 });
  expect(n!.deliveredAt).not.toBeNull();
});
