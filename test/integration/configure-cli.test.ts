/**
 * Live reconfiguration and the refused list, as on-call meets them: the real CLI (client/bin/target-health.js)
 * against the dev server (a worker running the loops) and PostgreSQL. `configure` changes a running
 * loop's tick (seen in the ticks' own times, on the new grid, after a continue-as-new too), its policy and
 * its owner, recorded in `settings_changes`; bad changes are one line naming the flag, exit 2, and leave
 * the loop as it was (no update admitted, no row); an unknown site is one line. An unknown signal name is
 * refused and listed by `status`; an applied decision drops the refusals that came before it.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import type { NativeConnection, Worker } from '@temporalio/worker';
import { listSettingsChanges } from '../../server/db/settings-changes';
import { findSite } from '../../server/db/sites';
import {
  type ConfigureResult,
  type SiteHealthState,
  configureUpdate,
  historyQuery,
  pauseSignal,
  stateQuery,
} from '../../loop/messages';
import { ingestNow, loopInput, newSite, prepareSite, startHealthySite, waitForState } from '../kit/control-loop';
import { CLI, cleanEnv, run } from '../kit/processes';
import { createTestWorker, env, eventually, openHarness, type TestHarness } from '../kit/services';
import { joinRegExp } from '../kit/regexp';

let h: TestHarness;
let worker: Worker;
let connection: NativeConnection;
let running: Promise<void>;
let cliEnv: NodeJS.ProcessEnv;
const dir = mkdtempSync(join(tmpdir(), 'configure-cli-'));

beforeAll(async () => {
  h = await openHarness();
  ({ worker, connection } = await createTestWorker(h));
  running = worker.run();
  cliEnv = cleanEnv({ TEMPORAL_ADDRESS: env('TEMPORAL_ADDRESS'), DATABASE_URL: env('DATABASE_URL') });
});

afterAll(async () => {
  worker.shutdown();
  await running;
  await connection.close();
  await h.close();
});

/** One line on stderr (after the program's name), exit 2, nothing on stdout, no stack. */
async function refused(args: string[], line: RegExp): Promise<void> {
  const r = await run(CLI, args, cliEnv);
  expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: '' });
  expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(r.stderr.trimEnd().replace(/^target-health: /, '')).toMatch(line);
}

async function cli(args: string[]): Promise<string> {
  const r = await run(CLI, args, cliEnv);
  if (r.code !== 0) throw new Error(`exit ${r.code}: ${r.stderr}`);
  return r.stdout;
}

function settingsFile(name: string, settings: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(settings));
  return path;
}

async function healthyLoop(
  prefix: string,
  overrides: Parameters<typeof loopInput>[1] = {},
): Promise<{ site: string; handle: WorkflowHandle; healthy: SiteHealthState }> {
  const site = await prepareSite(h.pool, prefix);
  await ingestNow(h.pool, site, { ok: 100 });
  const { handle, healthy } = await startHealthySite(h.client, h.taskQueue, loopInput(site, overrides));
  return { site, handle, healthy };
}

const times = (ticks: ReadonlyArray<{ assessedAt: string }>): number[] => ticks.map((t) => Date.parse(t.assessedAt));
const gaps = (ts: readonly number[]): number[] => ts.slice(1).map((t, i) => t - ts[i]!);

test(
  'configure changes the tick of a running loop from its next tick, ' + 'and the change survives continue-as-new',
  async () => {
    const { site, handle } = await healthyLoop('configure-tick', { maxTicksPerRun: 4 });
    const before = await waitForState(handle, 'three ticks on 1 s', (s) => s.tick >= 3);
    expect(before.tickIntervalMs).toBe(1_000);

    const result = JSON.parse(
      await cli([
        'configure',
        site,
        '--tick',
        '3s',
        '--owner',
        'night-shift@example.com',
        '--who',
        'alice@example.com',
        '--why',
        'fewer reads',
        '--json',
      ]),
    ) as ConfigureResult;
    expect(result.changes).toEqual([
      { field: 'tickIntervalMs', old: 1_000, new: 3_000 },
      { field: 'owner', old: `owner@${site}`, new: 'night-shift@example.com' },
    ]);
    expect(result.tickIntervalMs).toBe(3_000);
    // The next tick is booked at once on the new interval's grid.
    const nextTick = Date.parse(result.nextTickAt!);
    expect(nextTick % 3_000).toBe(0);

    // Ticks from then on fall on the 3 s grid, 3 s apart (or a multiple, had the loop been late), across a
    // continue-as-new.
    const changedRun = (await handle.query(stateQuery)).runs;
    const { later, history } = await eventually(
      async () => {
        const s = await handle.query(stateQuery);
        const ticks = await handle.query(historyQuery);
        return s.runs > changedRun && ticks.filter((t) => Date.parse(t.assessedAt) >= nextTick).length >= 4
          ? { later: s, history: ticks }
          : undefined;
      },
      'four ticks on 3 s and a continue-as-new',
      90_000,
    );
    expect(later.tickIntervalMs).toBe(3_000);
    const beforeChange = times(history.filter((t) => Date.parse(t.assessedAt) < nextTick));
    const afterChange = times(history.filter((t) => Date.parse(t.assessedAt) >= nextTick));
    for (const t of afterChange) expect(t % 3_000).toBe(0);
    for (const g of gaps(afterChange)) expect(g >= 3_000 && g % 3_000 === 0).toBe(true);
    // Before the change the same loop ticked on the 1 s grid.
    expect(beforeChange.length).toBeGreaterThanOrEqual(3);
    for (const t of beforeChange) expect(t % 1_000).toBe(0);

    // Recorded once, with who, why and what changed; the owner is the site's.
    const rows = await listSettingsChanges(h.pool, site);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      changeKey: result.changeKey,
      who: 'alice@example.com',
      why: 'fewer reads',
      changes: result.changes,
      settings: { tickIntervalMs: 3_000 },
    });
    expect(rows[0]!.changedAt.toISOString()).toBe(result.changedAt);
    expect((await findSite(h.pool, site))?.owner).toBe('night-shift@example.com');

    // The same settings again: nothing changes, nothing is recorded.
    expect(await cli(['configure', site, '--tick', '3s', '--who', 'alice@example.com'])).toMatch(
      new RegExp(`^nothing changed: ${site.replace(/\./g, '\\.')} already has these settings\n`),
    );
    // A policy change from a file: only the field given, printed old → new.
    const text = await cli([
      'configure',
      site,
      '--config',
      settingsFile('nominal.json', { policy: { concurrency: { nominal: 12 } } }),
      '--who',
      'bob@example.com',
    ]);
    expect(text).toMatch(
      joinRegExp(
        /^1 setting of .* changed by bob@example\.com at .*:\n/,
        / {2}policy\.concurrency\.nominal {2}16 → 12\n/,
        /in force from the next tick/,
      ),
    );
    expect((await listSettingsChanges(h.pool, site)).map((r) => r.changes)).toEqual([
      result.changes,
      [{ field: 'policy.concurrency.nominal', old: 16, new: 12 }],
    ]);
    await handle.terminate('test done');
  },
  150_000,
);

test('bad configure payloads are refused with one line naming the flag, and the loop is unharmed', async () => {
  const { site, handle, healthy } = await healthyLoop('configure-bad');
  await refused(
    ['configure', site, '--tick', '500ms', '--who', 'a'],
    /^--tick 500ms: expected a tick interval in milliseconds \(a whole number of at least 1000\)$/,
  );
  const floor = settingsFile('floor.json', { policy: { concurrency: { floor: 99 } } });
  await refused(
    ['configure', site, '--config', floor, '--who', 'a'],
    new RegExp(`^--config ${floor}: policy\\.concurrency\\.floor: must not exceed concurrency\\.nominal \\(16\\)$`),
  );
  const typo = settingsFile('typo.json', { polcy: { concurrency: { nominal: 4 } } });
  await refused(
    ['configure', site, '--config', typo, '--who', 'a'],
    new RegExp(`^--config ${typo}: unknown field "polcy"$`),
  );
  const other = settingsFile('site.json', { site: 'other.example.com' });
  await refused(
    ['configure', site, '--config', other, '--who', 'a'],
    /: site: a loop's site cannot change; start a loop for the other site instead$/,
  );
  await refused(
    ['configure', site, '--who', 'a'],
    /^configure: nothing to change: give --tick, --owner, --parser-owner or --config <file\.json>$/,
  );
  await refused(
    ['configure', site, '--tick', '10s', '--owner', 'a\nb', '--who', 'a'],
    /^--owner: expected a contact on one line/,
  );
  // Straight to the update (as `temporal workflow update execute` would send it): the validator refuses.
  const direct = await handle
    .executeUpdate(configureUpdate, { args: [{ who: 'a', settings: { tickIntervalMs: 'fast' } }] })
    .then(
      () => 'accepted',
      (err: unknown) => (err instanceof WorkflowUpdateFailedError ? (err.cause?.message ?? err.message) : String(err)),
    );
  expect(direct).toBe(
    'configure: settings.tickIntervalMs: expected a tick interval in milliseconds (a whole number of at least 1000)',
  );

  // Unharmed: still ticking every second on its settings, nothing recorded, no update ever admitted.
  const after = await waitForState(handle, 'more ticks', (s) => s.tick >= healthy.tick + 3);
  expect(after.tickIntervalMs).toBe(1_000);
  expect(after.controls).toEqual(healthy.controls);
  expect(await listSettingsChanges(h.pool, site)).toEqual([]);
  const events = (await handle.fetchHistory()).events ?? [];
  expect(events.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes)).toEqual([]);
  await handle.terminate('test done');
}, 120_000);

test('configure of a site without a running loop is one line, exit 2', async () => {
  const site = newSite('configure-none');
  await refused(
    ['configure', site, '--tick', '5s', '--who', 'a'],
    new RegExp(
      `^site: no running health loop for ${site.replace(/\./g, '\\.')}; start one with \`target-health start `,
    ),
  );
});

test('an unknown signal shows in the refused list; an applied decision drops the refusals before it', async () => {
  const { site, handle } = await healthyLoop('configure-signals');
  await handle.signal(pauseSignal, { who: '', why: 'no who' });
  await handle.signal('resmue', { who: 'alice@example.com', why: 'typo' });
  // A long name (the server takes up to its own limit) is cut; a control character is escaped.
  await handle.signal(`${'x'.repeat(300)}\n`);
  const refusedNow = await waitForState(handle, 'three refusals', (s) => s.rejected.length >= 3);
  expect(refusedNow.rejected).toEqual([
    'pause: who: required: who decides, e.g. "alice@example.com"',
    `unknown signal "resmue": this loop takes resume, stop, pause (e.g. target-health decide resume ${site} ` +
      `--who … --why …)`,
    expect.stringMatching(/^unknown signal "x{79}…": this loop takes resume, stop, pause/),
  ]);
  await handle.signal('res\u2028ume\u0007');
  const escaped = await waitForState(handle, 'the escaped name', (s) => s.rejected.length >= 4);
  expect(escaped.rejected[3]).toMatch(/^unknown signal "res\\u2028ume\\u0007": this loop takes/);
  expect(escaped.rejected.slice(0, 3)).toEqual([
    refusedNow.rejected[0],
    refusedNow.rejected[1],
    refusedNow.rejected[2],
  ]);
  const status = JSON.parse(await cli(['status', site, '--json'])) as SiteHealthState;
  expect(status.rejected).toEqual(escaped.rejected);
  await handle.signal('resmue', {});
  await waitForState(handle, 'the newest refusal last', (s) => s.rejected.length === 5);
  expect(await cli(['status', site])).toContain(
    `refused    unknown signal "resmue": this loop takes resume, stop, pause`,
  );

  // A valid decision is applied: the refusals before it no longer say anything about the site.
  await cli(['decide', 'pause', site, '--who', 'carol@example.com', '--why', 'hold']);
  const paused = await handle.query(stateQuery);
  expect(paused.awaitingHuman).not.toBeNull();
  expect(paused.rejected).toEqual([]);
  // No `refused` line (the rules line's "refused 0%" is a refusal rate, not the list).
  expect(await cli(['status', site])).not.toMatch(/^refused {4}/m);
  // A refusal after the decision is listed again.
  await handle.signal('stpo', {});
  const again = await waitForState(handle, 'the later refusal', (s) => s.rejected.length > 0);
  expect(again.rejected).toEqual([
    `unknown signal "stpo": this loop takes resume, stop, pause (e.g. target-health decide resume ${site} ` +
      `--who … --why …)`,
  ]);
  await handle.terminate('test done');
}, 120_000);
