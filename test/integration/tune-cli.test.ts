/**
 * `target-health tune` as a user runs it, on a site with scripted incidents and people's decisions (the issue's
 * acceptance point): a healthy site (`simulate quiet`) whose last day carries a four-minute wall of Cloudflare blocks
 * — the loop pauses on it, a person resumes 20 minutes later into normal traffic (a false pause) — and, later, a
 * slow rise of blocks and challenges the loop only throttles, until a person pauses it by hand (a late pause). The
 * loop's history is written through its db functions (test/kit/chart-history.ts) with the default settings. `tune`
 * labels both, searches, passes the guard rail on the scenario set, and proposes settings that fix both; `--apply`
 * sends them through `configure` to the running loop and `settings_changes` shows them, with the proposal as the
 * why. Bad input: one line, exit 2.
 */
import type { WorkflowHandle } from '@temporalio/client';
import type { NativeConnection, Worker } from '@temporalio/worker';
import { renderTune } from '../../client/tune/words';
import { listSettingsChanges } from '../../server/db/settings-changes';
import { type TuneReport, tuneReportSchema } from '../../client/tune/schema';
import { recordReplayAsHistory } from '../kit/chart-history';
import { startLoop, waitForState } from '../kit/control-loop';
import { CLI, cleanEnv, run } from '../kit/processes';
import { scriptedSite } from '../kit/scripted-incidents';
import { createTestWorker, env, openHarness, type TestHarness } from '../kit/services';

const M = 60_000;
const H = 60 * M;
const DAY = 24 * H;

let h: TestHarness;
let worker: Worker;
let connection: NativeConnection;
let running: Promise<void>;
let cliEnv: NodeJS.ProcessEnv;
let site: string;
const end = Math.floor(Date.now() / DAY) * DAY;
const day = end - DAY;
const blipAt = day + 9 * H;
const rampAt = day + 14 * H;
const handPauseAt = rampAt + 90 * M;
const falseResumeAt = blipAt + 20 * M;
const ramp = (top: number) => (t: number) => top * Math.min(1, (t - rampAt) / (40 * M));
let report: TuneReport;
let handle: WorkflowHandle | undefined;

const tune = (args: string[]) => run(CLI, ['tune', ...args], cliEnv);

/** One line on stderr, exit 2, nothing on stdout. */
async function refused(args: string[], line: RegExp): Promise<void> {
  const r = await tune(args);
  expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: '' });
  expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(r.stderr).toMatch(line);
}

beforeAll(async () => {
  h = await openHarness();
  ({ worker, connection } = await createTestWorker(h));
  running = worker.run();
  cliEnv = cleanEnv({ TEMPORAL_ADDRESS: env('TEMPORAL_ADDRESS'), DATABASE_URL: env('DATABASE_URL') });
  ({ site } = await scriptedSite('tune', {
    days: 4,
    end,
    stretches: [
      { from: blipAt, to: blipAt + 4 * M, hard: () => 1 },
      { from: rampAt, to: rampAt + 2 * H, hard: ramp(0.25), challenge: ramp(0.04), slow: (t) => 1 + ramp(0.6)(t) },
    ],
  }));
  await recordReplayAsHistory(h.pool, {
    site,
    from: new Date(blipAt - 3 * H),
    to: new Date(rampAt + 4 * H),
    tickMs: M,
    decisions: [
      { at: new Date(falseResumeAt).toISOString(), kind: 'resume', who: 'alice@example.com', why: 'a blip, gone' },
      { at: new Date(handPauseAt).toISOString(), kind: 'pause', who: 'bob@example.com', why: 'they are blocking us' },
      { at: new Date(rampAt + 150 * M).toISOString(), kind: 'resume', who: 'bob@example.com', why: 'over now' },
    ],
  });
  // The site's loop runs (product defaults, 1-minute ticks): its settings are the ones in force, and --apply needs it.
  handle = await startLoop(h.client, h.taskQueue, { site, tickIntervalMs: M });
  await waitForState(handle, 'one tick', (s) => s.tick >= 1);
  const r = await tune([
    site,
    '--from',
    new Date(end - 4 * DAY).toISOString(),
    '--quiet-days',
    '2',
    '--json',
    '--apply',
    '--who',
    'tuner@example.com',
  ]);
  if (r.code !== 0) throw new Error(`tune exited ${r.code}: ${r.stderr}`);
  report = tuneReportSchema.parse(JSON.parse(r.stdout));
  process.stderr.write(`[tune] ${renderTune(report)}`);
}, 1_800_000);

afterAll(async () => {
  await handle?.terminate('test over');
  worker.shutdown();
  await running;
  await connection.close();
  await h.close();
});

test('both incidents are labelled from the decisions', () => {
  const labels = report.incidents.filter((i) => i.label !== null);
  expect(labels.map((i) => i.label)).toEqual(['false-pause', 'late-pause']);
  expect(labels[0]!.because).toMatch(/^resumed by alice@example\.com \d+ min after the pause, .* served normally/);
  expect(Date.parse(labels[0]!.judgedAt)).toBe(falseResumeAt);
  expect(labels[1]!.because).toMatch(/^paused by hand by bob@example\.com .* while the loop was degrading/);
  expect(Date.parse(labels[1]!.judgedAt)).toBe(handPauseAt);
  expect(report.quietDays).toHaveLength(2);
});

test('the proposal fixes both, without a new miss or false pause on the scenario set', () => {
  expect(report.verdict.kind).toBe('propose');
  expect(report.current).toMatchObject({ missed: 1, falsePauses: 1 });
  expect(report.proposal!.scorecard).toMatchObject({ missed: 0, falsePauses: 0 });
  expect(report.proposal!.outcomes.map((o) => [o.label, o.rightAfter])).toEqual([
    ['false-pause', true],
    ['late-pause', true],
  ]);
  for (const c of report.proposal!.changes) expect(c.why).toMatch(/^alone: /);
  expect(report.guard).not.toBeNull();
});

test('--apply sent it through configure: settings_changes shows it, the proposal as the why', async () => {
  expect(report.settingsFrom).toMatch(/^the running loop's settings/);
  expect(report.applied).not.toBeNull();
  const rows = await listSettingsChanges(h.pool, site);
  expect(rows).toHaveLength(1);
  expect(rows[0]!.changeKey).toBe(report.applied!.changeKey);
  expect(rows[0]!.who).toBe('tuner@example.com');
  expect(rows[0]!.why).toBe(report.proposal!.summary);
  const fields = (xs: { field: string }[]) => xs.map((c) => c.field).sort();
  expect(fields(rows[0]!.changes)).toEqual(fields(report.proposal!.changes));
  for (const c of report.proposal!.changes)
    expect(rows[0]!.changes.find((x) => x.field === c.field)).toEqual({ field: c.field, old: c.from, new: c.to });
});

test('--fleet: one report per site, in name order; a site without labels gets no proposal, and says why', async () => {
  const quiet = () => scriptedSite('tunefleet', { days: 2, end, stretches: [] });
  const [a, b] = (await Promise.all([quiet(), quiet()])).map((s) => s.site).sort();
  // One by name, one by a glob that matches only it.
  const r = await tune([
    '--fleet',
    `${b!},${a!.replace(/\.sim\.example$/, '.*')}`,
    '--from',
    '-2d',
    '--quiet-days',
    '1',
    '--json',
  ]);
  expect(r.code).toBe(0);
  const reports = r.stdout
    .trimEnd()
    .split('\n')
    .map((l) => tuneReportSchema.parse(JSON.parse(l)));
  expect(reports.map((x) => x.site)).toEqual([a, b]);
  for (const x of reports) {
    expect(x.verdict.kind).toBe('not-enough-evidence');
    expect(x.verdict.text).toMatch(/^not enough evidence to propose a change: 0 labelled incident\(s\) in the period/);
    expect({ proposal: x.proposal, applied: x.applied, search: x.search }).toEqual({
      proposal: null,
      applied: null,
      search: null,
    });
  }
  await refused(['--fleet', 'no-such-*.nowhere.example'], /--fleet: "no-such-\*\.nowhere\.example" matches no site/);
  await refused([a!, '--fleet', b!], /site: give one site .* or --fleet <sites>, not both/);
}, 600_000);

test('bad input: one line naming the flag, exit 2', async () => {
  await refused(['nowhere-at-all.example.com'], /site: nowhere-at-all\.example\.com is unknown here/);
  await refused([site, '--from', 'yesterday-ish'], /--from: "yesterday-ish" is not a time/);
  await refused([site, '--quiet-days', '9'], /--quiet-days: "9" is not a number of days from 1 to 7/);
  const mark = await run(
    CLI,
    ['review', site, '--incident', new Date(blipAt + 5 * M).toISOString(), '--mark', 'maybe', '--why', 'x'],
    cliEnv,
  );
  expect({ code: mark.code, stdout: mark.stdout }).toEqual({ code: 2, stdout: '' });
  expect(mark.stderr).toMatch(/--mark: "maybe" is not a verdict; give --mark right or --mark false-alarm/);
}, 120_000);
