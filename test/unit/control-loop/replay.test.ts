/**
 * Determinism: the committed histories (recorded by `npm run histories:regenerate` from real runs) must
 * replay on the current workflow code. A change that would break running workflows fails here; the
 * same change behind patched() passes. No services needed: replay runs the workflow code only.
 */
import { join } from 'node:path';
import {
  DefaultLogger,
  Runtime,
  Worker,
  bundleWorkflowCode,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import { committedHistories, recordings } from '../../kit/histories';
import { DEPRECATED_PATCHES, PATCHES } from '../../../workflows/patches';
import { localActivityMarker } from '../../../loop/local-activity-marker';
import { bundlerOptions } from '../../../worker/workflow-bundle';

const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
const bundles = new Map<string, WorkflowBundleWithSourceMap>();

async function bundle(path: string): Promise<WorkflowBundleWithSourceMap> {
  let b = bundles.get(path);
  if (!b) {
    b = await bundleWorkflowCode({ workflowsPath: path, ...bundlerOptions(), logger: quiet });
    bundles.set(path, b);
  }
  return b;
}

const WORKFLOWS = require.resolve('../../../workflows');
const FIXTURES = join(__dirname, '..', '..', 'kit', 'replay-fixtures');
const histories = committedHistories();

beforeAll(() => {
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    // Installed already in this Jest worker process.
  }
});

test.each(recordings())('recording %s has a history of each scenario', (recording) => {
  expect(histories.filter((h) => h.recording === recording).map((h) => h.scenario)).toEqual(
    expect.arrayContaining([
      'deliver-notification',
      'site-health-escalation',
      'site-health-continue-as-new-run1',
      'site-health-continue-as-new-run2',
      'site-health-route-parser',
    ]),
  );
});

test.each(histories.map((h) => [h.name, h] as const))(
  '%s replays on the current workflow code',
  async (name, h) => {
    await expect(
      Worker.runReplayHistory({ workflowBundle: await bundle(WORKFLOWS) }, h.history, name),
    ).resolves.toBeUndefined();
  },
  60_000,
);

test('a change not behind patched() is caught: replaying the old histories fails', async () => {
  const escalation = histories.find((h) => h.scenario === 'site-health-escalation')!;
  await expect(
    Worker.runReplayHistory(
      { workflowBundle: await bundle(join(FIXTURES, 'unpatched-change.ts')) },
      escalation.history,
      'unpatched',
    ),
  ).rejects.toThrow(/[Nn]ondetermin|DeterminismViolation/);
}, 60_000);

test('the same change behind patched() replays the old histories', async () => {
  for (const h of histories.filter((x) => x.scenario.startsWith('site-health'))) {
    await Worker.runReplayHistory(
      { workflowBundle: await bundle(join(FIXTURES, 'patched-change.ts')) },
      h.history,
      h.name,
    );
  }
}, 120_000);

/** The patch ids a history recorded (`core_patch` markers), decoded from their payloads. */
function patchesIn(history: (typeof histories)[number]['history']): string[] {
  return (history.events ?? []).flatMap((e) => {
    const a = e.markerRecordedEventAttributes;
    if (a?.markerName !== 'core_patch') return [];
    const data = a.details?.['patch-data']?.payloads?.[0]?.data;
    return data ? [(JSON.parse(Buffer.from(data).toString('utf8')) as { id: string }).id] : [];
  });
}

test(
  'the live-settings path is replayed with its messages: a configure update, an unknown signal, a ' +
    'continue-as-new after the change',
  () => {
    const newest = recordings()[recordings().length - 1]!;
    const runs = histories.filter(
      (h) => h.recording === newest && h.scenario.startsWith('site-health-live-settings-run'),
    );
    expect(runs.length).toBeGreaterThanOrEqual(2);
    const events = runs.flatMap((h) => h.history.events ?? []);
    expect(
      events.filter(
        (e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'configure',
      ),
    ).toHaveLength(1);
    expect(events.some((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'resmue')).toBe(true);
  },
);

test(
  'the local assessment and its fallback are replayed: local markers, and a tick whose local attempts failed ' +
    'assessed by the regular activity',
  () => {
    const newest = recordings()[recordings().length - 1]!;
    const fallback = histories.find((h) => h.name === `${newest}/site-health-assessment-fallback`);
    expect(fallback).toBeDefined();
    const events = fallback!.history.events ?? [];
    const markers = events
      .map((e) => localActivityMarker(e))
      .filter((m) => m !== null && m.activityType === 'assessSite');
    expect(markers.filter((m) => !m!.failed).length).toBeGreaterThanOrEqual(2);
    expect(markers.filter((m) => m!.failed).length).toBeGreaterThanOrEqual(1);
    expect(
      events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'assessSite').length,
    ).toBeGreaterThanOrEqual(1);
  },
);

test(
  'each patch has histories recorded without it and with it; ' + 'no history holds a patch the code does not name',
  () => {
    const patched = Object.values(PATCHES);
    const named = new Set([...patched, ...Object.values(DEPRECATED_PATCHES)]);
    const siteHealth = histories.filter((h) => h.scenario.startsWith('site-health'));
    // A worker refuses a (not deprecated) patch marker its code does not name: such histories must go.
    for (const h of siteHealth) for (const id of patchesIn(h.history)) expect(named).toContain(id);
    for (const id of named) expect(siteHealth.some((h) => patchesIn(h.history).includes(id))).toBe(true);
    // Both branches of a patch still behind patched() are replayed.
    for (const id of patched) expect(siteHealth.some((h) => !patchesIn(h.history).includes(id))).toBe(true);
  },
);
