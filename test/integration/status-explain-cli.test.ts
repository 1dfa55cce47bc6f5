/**
 * `target-health status` explained, `explain <site> --at T`, the sparklines of `sites` and `status`, and
 * `start`'s warning without a canary — the real CLI (client/bin/target-health.js) against the dev server (a
 * worker running the loops) and PostgreSQL. Two loops driven by real traffic through the signal store:
 * one healthy, one that went healthy → degrading → resisting and waits for a person, without a canary.
 * The explanations are checked against the stored assessments they come from; every bad input is one
 * line and exit 2. Sites of this run share a random prefix.
 */
import { refusalRuleIn } from '../../core/control/band-wording';
import { randomUUID } from 'node:crypto';
import type { NativeConnection, Worker } from '@temporalio/worker';
import { workflowIdForSite } from '../../core/common/names';
import { type Explained, explainSchema } from '../../client/on-call/explain-at';
import { fleetSchema } from '../../server/fleet/fleet';
import { type Status, decideCommands, statusSchema } from '../../client/on-call/status';
import { addCanaryCommand, noCanaryWarning } from '../../client/on-call/canary-hint';
import {
  ingestNow,
  loopInput,
  newSite,
  prepareSite,
  registerSite,
  startHealthySite,
  waitForState,
} from '../kit/control-loop';
import { CLI, cleanEnv, run } from '../kit/processes';
import { createTestWorker, env, openHarness, type TestHarness } from '../kit/services';
import { joinRegExp } from '../kit/regexp';

let h: TestHarness;
let worker: Worker;
let connection: NativeConnection;
let running: Promise<void>;
let cliEnv: NodeJS.ProcessEnv;
const RUN = `explain${randomUUID().slice(0, 6)}`;
let healthy: string;
let paused: string;
/** Loops `start` began on a task queue no worker polls (only the CLI's output matters there). */
const startedByCli: string[] = [];

async function refused(args: string[], line: RegExp): Promise<void> {
  const r = await run(CLI, args, cliEnv);
  expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: '' });
  expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(r.stderr.trimEnd()).toMatch(line);
}

async function cli(args: string[], extra: Record<string, string> = {}): Promise<string> {
  const r = await run(CLI, args, { ...cliEnv, ...extra });
  if (r.code !== 0) throw new Error(`exit ${r.code}: ${r.stderr}`);
  return r.stdout;
}

/** The stored assessment of a tick, as the activity wrote it. */
async function storedResult(assessmentKey: string): Promise<{
  scoring?: { smoothedScore: number | null; scoredBand: string };
  assessment: {
    reasons: string[];
    health: {
      score: number | null;
      explanation: {
        signals: Record<
          string,
          {
            now: number;
            baseline: number;
            penalty: number;
            interval?: { now: { low: number; high: number }; baseline: { low: number; high: number } };
          }
        >;
      };
    };
  };
}> {
  const { rows } = await h.pool.query<{ result: never }>('SELECT result FROM assessments WHERE assessment_key = $1', [
    assessmentKey,
  ]);
  return rows[0]!.result;
}

beforeAll(async () => {
  h = await openHarness();
  ({ worker, connection } = await createTestWorker(h));
  running = worker.run();
  cliEnv = cleanEnv({
    TEMPORAL_ADDRESS: env('TEMPORAL_ADDRESS'),
    DATABASE_URL: env('DATABASE_URL'),
    TEMPORAL_TASK_QUEUE: h.taskQueue,
  });
  healthy = await prepareSite(h.pool, `${RUN}-healthy`);
  paused = await prepareSite(h.pool, `${RUN}-paused`);
  await Promise.all([ingestNow(h.pool, healthy, { ok: 100 }), ingestNow(h.pool, paused, { ok: 100 })]);
  const [, p] = await Promise.all([
    startHealthySite(h.client, h.taskQueue, loopInput(healthy)),
    startHealthySite(h.client, h.taskQueue, loopInput(paused)),
  ]);
  // 60 of 200 hard-blocked: degrading; challenges and soft blocks on top: resisting, waiting for a person.
  await ingestNow(h.pool, paused, { hard: 60, ok: 40 });
  await waitForState(p.handle, 'degrading', (s) => s.band === 'degrading');
  await ingestNow(h.pool, paused, { challenge: 100, soft: 100 });
  await waitForState(p.handle, 'resisting and waiting', (s) => s.band === 'resisting' && s.awaitingHuman !== null);
}, 240_000);

afterAll(async () => {
  for (const site of [healthy, paused, ...startedByCli])
    await h.client.workflow
      .getHandle(workflowIdForSite(site))
      .terminate('test over')
      .catch(() => undefined);
  worker.shutdown();
  await running;
  await connection.close();
  await h.close();
});

test('status --json: the latest tick signal by signal as stored, canaries, the trend, what happens next', async () => {
  const s: Status = statusSchema.parse(JSON.parse(await cli(['status', healthy, '--json'])));
  // The state as before (history included).
  expect(s).toMatchObject({ site: healthy, band: 'healthy', awaitingHuman: null });
  expect(s.history.length).toBeGreaterThan(0);
  const e = s.explained;
  expect(e.tick).not.toBeNull();
  expect(e.latest!.state).toBe('scored');
  // Each health signal now vs normal, exactly the stored assessment's numbers.
  const stored = await storedResult(e.tick!.assessmentKey);
  expect(e.latest!.score).toBe(stored.assessment.health.score);
  for (const row of e.latest!.signals.filter((x) => x.score === 'health')) {
    const sig = stored.assessment.health.explanation.signals[row.signal]!;
    expect({ now: row.now, normal: row.normal, penalty: row.penalty }).toEqual({
      now: sig.now,
      normal: sig.baseline,
      penalty: sig.penalty,
    });
    if (row.unit === 'rate') expect(row.interval).toEqual({ now: sig.interval!.now, normal: sig.interval!.baseline });
  }
  expect(e.latest!.signals.map((x) => x.signal)).toEqual(
    expect.arrayContaining(['hard_block', 'challenge', 'soft_block', 'latency']),
  );
  // The normal is the 14-day baseline: a hard-block rate with a narrow interval.
  const hard = e.latest!.signals.find((x) => x.signal === 'hard_block')!;
  expect(hard.interval!.normal.high - hard.interval!.normal.low).toBeLessThan(0.05);
  // No canary of its own, and the crawler sent none: the latest tick's window counted zero.
  expect(e.canaries).toEqual({
    defined: [],
    latest: [],
    crawler: { requests: 0, failed: 0, from: e.latest!.window.currentFrom, to: e.latest!.window.currentTo },
  });
  expect(e.next).toMatchObject({
    awaitingHuman: false,
    plan: expect.stringMatching(/^keeps the usual pace/),
    commands: [],
  });
  expect(Date.parse(e.next.nextTickAt!)).toBeGreaterThan(Date.parse(e.tick!.assessedAt));
  // The day's trend: 20 points of 72 minutes, the last one this run's perfect score.
  expect(e.trend.points).toHaveLength(20);
  expect(e.trend.bucketMs).toBe(72 * 60_000);
  expect(e.trend.points.at(-1)).toBe(100);
  expect(e.trend.sparkline.at(-1)).toBe('█');

  const text = await cli(['status', healthy]);
  expect(text).toMatch(/^trend {6}[·▁▂▃▄▅▆▇█]{19}█ {2}\(mean score per 1 h 12 min over the last 1 d, oldest first\)$/m);
  expect(text).toMatch(/^signals at tick \d+ \(.+\), now vs the site's normal \(95% intervals\):$/m);
  expect(text).toMatch(
    joinRegExp(
      /^ {2}hard_block\s+0% \(0%–\d+\.\d+%\) 0\/\d+\s+\d+(\.\d+)?% /m,
      /\(\d+(\.\d+)?%–\d+\.\d+%\)\s+\+0% vs normal, no penalty$/m,
    ),
  );
  expect(text).toMatch(/^ {2}score 100 = 100 − 0 points$/m);
  expect(text).toMatch(/^canaries {3}none defined \(see "next" for how to add one\)$/m);
  expect(text).toMatch(/^next {7}keeps the usual pace/m);
}, 60_000);

test('status of a paused site without a canary: says so plainly, with the exact commands', async () => {
  const s = statusSchema.parse(JSON.parse(await cli(['status', paused, '--json'])));
  expect(s.awaitingHuman).not.toBeNull();
  expect(s.explained.next).toMatchObject({
    awaitingHuman: true,
    commands: [...decideCommands(paused), addCanaryCommand(paused)],
  });
  expect(s.explained.next.why).toContain(
    'it has NO canary defined: while paused there is no traffic, so nothing shows whether the site calmed down',
  );
  expect(s.explained.latest!.reasons).toEqual(expect.arrayContaining(['challenge']));
  // The trend fell with the refusals: the last point is below the first of this run.
  const points = s.explained.trend.points.filter((p): p is number => p !== null);
  expect(points.at(-1)!).toBeLessThan(100);

  const text = await cli(['status', paused]);
  const lines = text.split('\n');
  expect(lines).toContain(
    'canaries   none defined — nothing shows whether the paused site calmed down (see "next" for how to add one)',
  );
  expect(lines).toContain(
    'next       waits for a person: keeps assessing every tick, reminds the owner, changes nothing on its own',
  );
  expect(lines).toContain(
    `           run: target-health decide resume ${paused} --who <you> --why "<why>"   (cautious controls; or ` +
      `--mode explicit --concurrency <n> --revisit <x>)`,
  );
  expect(lines).toContain(`                target-health decide stop ${paused} --who <you> --why "<why>"`);
  expect(lines).toContain(`                ${addCanaryCommand(paused)}`);
  // What the existing status lines said stays.
  // Paused by a refusal rule, not by a score below 50: the band line names the rule of the pausing tick.
  const pausing = await h.pool.query<{ reasons: string[] }>(
    "SELECT result->'assessment'->'reasons' AS reasons FROM assessments WHERE assessment_key = $1",
    [s.awaitingHuman!.assessmentKey],
  );
  const rule = refusalRuleIn(pausing.rows[0]!.reasons);
  expect(rule).not.toBeNull();
  expect(s.explained.bandCause).toEqual({ kind: 'rule', rule });
  expect(text).toMatch(/^band\s+resisting \(paused by the (majority|total)-refusal rule\)$/m);
  expect(s.explained.next.why).toMatch(/^paused by the (majority|total)-refusal rule since /);
  expect(text).toMatch(/^waiting\s+YES since /m);
}, 60_000);

test('explain --at: the tick at or before T, its signals, band and controls then', async () => {
  // The tick that moved the site to resisting, and the one before it (still degrading).
  const { rows } = await h.pool.query<{ assessment_key: string; assessed_at: Date }>(
    `SELECT a.assessment_key, a.assessed_at
       FROM control_audit c JOIN assessments a ON a.assessment_key = c.assessment_key
      WHERE c.site = $1 AND c.new_controls ->> 'band' = 'resisting' AND c.old_controls ->> 'band' = 'degrading'`,
    [paused],
  );
  expect(rows).toHaveLength(1);
  const toResisting = rows[0]!;
  const at = toResisting.assessed_at.toISOString();
  const x: Explained = explainSchema.parse(JSON.parse(await cli(['explain', paused, '--at', at, '--json'])));
  expect(x.tick.assessmentKey).toBe(toResisting.assessment_key);
  expect(x).toMatchObject({
    site: paused,
    at,
    band: 'resisting',
    controls: { paused: true, canaryOnly: true, band: 'resisting' },
    controlsChange: { actor: 'control-loop' },
  });
  const stored = await storedResult(toResisting.assessment_key);
  // The tick's own smoothed score and scored band, as stored with it — the numbers its change was worded with.
  expect(x.scoring).toEqual(stored.scoring);
  expect(x.scoring).toEqual({ smoothedScore: expect.any(Number), scoredBand: 'resisting' });
  expect(x.controlsChange!.reason).toContain(`smoothed ${x.scoring!.smoothedScore}`);
  expect(x.explanation.reasons).toEqual(stored.assessment.reasons);
  expect(x.explanation.score).toBe(stored.assessment.health.score);
  const challenge = x.explanation.signals.find((s) => s.signal === 'challenge')!;
  expect(challenge).toMatchObject({
    reason: true,
    now: stored.assessment.health.explanation.signals.challenge!.now,
    normal: stored.assessment.health.explanation.signals.challenge!.baseline,
  });
  expect(challenge.now).toBeGreaterThan(challenge.interval!.normal.high);
  expect(challenge.penalty).toBeGreaterThan(0);

  // A millisecond earlier: the tick before, still degrading.
  const before = explainSchema.parse(
    JSON.parse(
      await cli(['explain', paused, '--at', new Date(toResisting.assessed_at.getTime() - 1).toISOString(), '--json']),
    ),
  );
  expect(Date.parse(before.tick.assessedAt)).toBeLessThan(toResisting.assessed_at.getTime());
  expect(before.band).toBe('degrading');
  expect(before.controls!.paused).toBe(false);

  // No --at: the latest tick; a relative time works too.
  const latest = explainSchema.parse(JSON.parse(await cli(['explain', paused, '--json'])));
  expect(Date.parse(latest.tick.assessedAt)).toBeGreaterThanOrEqual(toResisting.assessed_at.getTime());
  expect(
    explainSchema.parse(JSON.parse(await cli(['explain', paused, '--at', '-0s', '--json']))).tick.tick,
  ).toBeGreaterThanOrEqual(latest.tick.tick);

  const text = await cli(['explain', paused, '--at', at]);
  expect(text.split('\n')[0]).toBe(
    `${paused} at tick ${x.tick.tick} (${x.tick.assessedAt.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}), the ` +
      `latest tick at or before ${at.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}`,
  );
  expect(x.bandCause).toEqual({ kind: 'rule', rule: refusalRuleIn(x.explanation.reasons) });
  expect(text).toMatch(/^band {7}resisting \(paused by the (majority|total)-refusal rule\)$/m);
  // The tick explained made the change: the reason shown is its own.
  expect(text).toMatch(/^ {11}set by this tick: resisting: paused by the (majority|total)-refusal rule; score \d+, /m);
  expect(text).toMatch(/^controls {3}PAUSED \(canaries only\)/m);
  expect(text).toContain(
    `\nsmoothed   ${x.scoring!.smoothedScore}, scored band resisting (what the smoothed score and the refusal rules ` +
      'say alone)\n',
  );
  expect(text).toMatch(/^ {2}challenge\s+\d+\.\d% \(\d+\.\d%–\d+\.\d%\) \d+\/\d+\s+.* ← reason$/m);
}, 60_000);

test('explain: bad input is one line, exit 2', async () => {
  await refused(
    ['explain', `nope-${RUN}.example.com`],
    joinRegExp(
      /^target-health: site: nope-.* is unknown here \(no assessments, /,
      /controls or registration\); list the sites with `target-health sites`$/,
    ),
  );
  await refused(
    ['explain', paused, '--at', '2020-01-01'],
    joinRegExp(
      /^target-health: --at: no tick of .* at or before "2020-01-01" /,
      /\(2020-01-01T00:00:00\.000Z\) and no stored traffic before it to replay one from; /,
      /its ticks run from .* to .*$/,
    ),
  );
  await refused(
    ['explain', paused, '--at', 'yesterday'],
    /^target-health: --at: "yesterday" is not a time; use an ISO-8601 time with a zone/,
  );
  const registered = newSite(`${RUN}-registered`);
  await registerSite(h.pool, registered);
  await refused(
    ['explain', registered],
    /^target-health: site: .* has no ticks stored yet; start its loop with `target-health start .*`$/,
  );
}, 60_000);

test('sites: a sparkline of the day per site, read for all listed sites', async () => {
  const fleet = fleetSchema.parse(JSON.parse(await cli(['sites', '--site', RUN, '--json'])));
  expect(fleet.trend).toMatchObject({ bucketMs: 72 * 60_000, points: 20 });
  const trend = (site: string) => fleet.sites.find((s) => s.site === site)!.trend!;
  expect(trend(healthy)).toHaveLength(20);
  expect(trend(healthy).at(-1)).toBe(100);
  expect(trend(paused).at(-1)!).toBeLessThan(100);
  const lines = (await cli(['sites', '--site', RUN])).split('\n');
  expect(lines[2]).toMatch(/^SITE\s+BAND\s+SCORE \/ SMOOTHED\s+LAST 24H\s+PARSER/);
  const healthyLine = lines.find((l) => l.startsWith(healthy))!;
  expect(healthyLine).toMatch(/ {2}[·▁▂▃▄▅▆▇█]{19}█ {2}/);
}, 60_000);

test('start warns on stderr (one line, exit 0) when the site has no canary, and not once it has one', async () => {
  // A task queue no worker polls: only what `start` prints matters here.
  const queue = { TEMPORAL_TASK_QUEUE: `nobody-${RUN}` };
  const bare = newSite(`${RUN}-bare`);
  startedByCli.push(bare);
  const r = await run(CLI, ['start', bare, '--tick', '60s'], { ...cliEnv, ...queue });
  expect(r.code).toBe(0);
  expect(r.stdout).toContain(`started site-health:${bare}`);
  expect(r.stderr).toBe(`target-health: ${noCanaryWarning(bare)}\n`);

  const guarded = newSite(`${RUN}-guarded`);
  startedByCli.push(guarded);
  await registerSite(h.pool, guarded);
  await cli(
    ['canary', 'add', guarded, '--url', 'http://127.0.0.1:9/p/1', '--expect-text', '.price', '--equals', '139.95'],
    { TARGET_HEALTH_CANARY_ALLOWED_TARGETS: '127.0.0.1' },
  );
  const g = await run(CLI, ['start', guarded, '--tick', '60s'], { ...cliEnv, ...queue });
  expect({ code: g.code, stderr: g.stderr }).toEqual({ code: 0, stderr: '' });
}, 60_000);
