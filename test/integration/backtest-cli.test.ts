/**
 * `target-health backtest <dir>` as a user runs it, on a small scenario set written by `target-health
 * simulate` (2 days: one day of history, then the incident day): the events go through the product's
 * ingest (classification included) into scratch databases, the loop is replayed, the reference rules
 * evaluated, and the scorecard printed — while the live database's tables get nothing and no scratch
 * database is left behind. Then the mistakes a user makes: each one line naming the file or field,
 * exit 2, nothing left behind. And a scenario written days ago, moved into the store's horizon.
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync, copyFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPool, type Pool } from '../../server/db/pool';
import type { Scorecard, ScenarioScore } from '../../tools/backtest/scorecard';
import type { ScenarioTiming } from '../../tools/backtest/run';
import type { ScenarioTruth } from '../../core/scenarios/truth';
import { CLI, cleanEnv, run } from '../kit/processes';
import { env } from '../kit/services';
import { joinRegExp } from '../kit/regexp';

const MINUTE = 60_000;
const DAY = 86_400_000;

let pool: Pool;
let dir: string;
const cli = (args: string[]) => run(CLI, args, cleanEnv({ DATABASE_URL: env('DATABASE_URL') }));

/** Names of the scratch databases on the server (the backtest's prefix). */
async function scratchDatabases(): Promise<string[]> {
  const { rows } = await pool.query<{ datname: string }>(
    "SELECT datname FROM pg_database WHERE datname LIKE 'th\\_backtest\\_%' ORDER BY datname",
  );
  return rows.map((r) => r.datname);
}

async function liveRows(sites: readonly string[]): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(
    `SELECT (SELECT count(*) FROM request_events WHERE site = ANY($1))
          + (SELECT count(*) FROM rollup_minute WHERE site = ANY($1))
          + (SELECT count(*) FROM sites WHERE site = ANY($1)) AS n`,
    [sites],
  );
  return Number(rows[0]!.n);
}

/**
 * The scenarios end at the latest 12:00 UTC that has passed: the traffic follows a daily swing, so how
 * many of the incident day's first ticks lack a baseline depends on the hour the history starts at.
 */
const END = new Date(Math.floor((Date.now() - 12 * 3_600_000) / DAY) * DAY + 12 * 3_600_000);

const truthOf = (name: string): ScenarioTruth =>
  JSON.parse(readFileSync(join(dir, `${name}.truth.json`), 'utf8')) as ScenarioTruth;

beforeAll(async () => {
  pool = createPool(env('DATABASE_URL'), 2);
  dir = mkdtempSync(join(env('TH_TEST_DIR'), 'backtest-'));
  for (const name of ['sudden-wall', 'dead-pool']) {
    const written = await cli(['simulate', name, '--days', '2', '--out', dir, '--end', END.toISOString()]);
    expect(written.code).toBe(0);
  }
}, 120_000);
afterAll(async () => pool.end());

test(
  'prints the scorecard of the loop and the reference rules; the live tables get nothing, no scratch database is ' +
    'left',
  async () => {
    const before = await scratchDatabases();
    const result = await cli(['backtest', dir, '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const out = JSON.parse(result.stdout) as { scorecard: Scorecard; timings: ScenarioTiming[]; tickMs: number };
    expect(out.tickMs).toBe(MINUTE);
    expect(out.scorecard.scenarios.map((s) => s.scenario)).toEqual(['dead-pool', 'sudden-wall']);
    const [pool1, wall] = out.scorecard.scenarios as [ScenarioScore, ScenarioScore];
    const wallTruth = truthOf('sudden-wall');
    // Fresh files: nothing moved; one tick a minute over the incident day.
    expect(out.timings.map((t) => [t.scenario, t.shiftDays, t.ticks, t.database])).toEqual([
      ['dead-pool', 0, 1440, null],
      ['sudden-wall', 0, 1440, null],
    ]);
    expect(out.timings.every((t) => t.events > 60_000)).toBe(true);
    expect(wall.onset).toBe(wallTruth.onset);

    // The reference rules read the classified minute rollups: 97 % Cloudflare 403 pages (recognised as
    // hard blocks) make "success < 40 % over 5 minutes" fire once 4 of the last 5 minutes are blocked,
    // within 5 minutes of the onset; the challenge threshold never fires on hard blocks.
    const success = wall.rules.find((r) => r.rule === 'success<40%')!;
    expect(success.delayMs).toBeGreaterThanOrEqual(3 * MINUTE);
    expect(success.delayMs).toBeLessThanOrEqual(5 * MINUTE);
    expect(success.falseAlarms).toBe(0);
    expect(wall.rules.find((r) => r.rule === 'challenge>5%')).toMatchObject({
      alertAt: null,
      missed: true,
      falseAlarms: 0,
    });

    // The loop: the wall pauses the site, after its onset, and nothing is paused on the quiet history
    // or on the dead pool (a route problem: the right route alert, no throttle).
    // The first hour has no score: the baseline ends a day before the tick's hour, where the 1-day history starts.
    expect(wall.loop).toMatchObject({
      missedPause: false,
      falsePauses: 0,
      falseDegrades: 0,
      topReason: 'hard_block',
      topReasonMatches: true,
      unscoredTicks: 60,
    });
    expect(Date.parse(wall.loop.firstPauseAt!)).toBeGreaterThanOrEqual(Date.parse(wallTruth.onset!));
    expect(pool1.loop).toMatchObject({ missedRouteAlert: false, falsePauses: 0, falseDegrades: 0, throttledTicks: 0 });
    expect(pool1.loop.rightRouteAlertAt).not.toBeNull();
    expect(out.scorecard.overall).toMatchObject({ scenarios: 2, missedPauses: 0, falsePauses: 0 });

    expect(await liveRows([wallTruth.site, truthOf('dead-pool').site])).toBe(0);
    expect(await scratchDatabases()).toEqual(before);

    // The same run as a table.
    const table = await cli(['backtest', dir, '--tick', '10m']);
    expect(table.code).toBe(0);
    // Shown in the CI log: the scorecard of this small set.
    process.stdout.write(`\n${table.stdout}\n`);
    expect(table.stdout).toMatch(/^Backtest: 2 scenarios, ticks every 10m, /);
    expect(table.stdout).toMatch(/^sudden-wall +hard_block +\+\d+m +\+\d+m /m);
    expect(table.stdout).toMatch(/^alert +detected +missed +false alarms +median delay +median lead$/m);
    expect(await scratchDatabases()).toEqual(before);
  },
  300_000,
);

test('bad input: one line naming the file or field, exit 2, no scratch database left behind', async () => {
  const before = await scratchDatabases();
  const bad = mkdtempSync(join(env('TH_TEST_DIR'), 'backtest-bad-'));
  const expectOneLine = async (args: string[], pattern: RegExp) => {
    const r = await cli(args);
    expect({
      code: r.code,
      stderr: r.stderr.trim(),
      lines: r.stderr.trim().split('\n').length,
      stdout: r.stdout,
    }).toEqual({ code: 2, stderr: expect.stringMatching(pattern), lines: 1, stdout: '' });
  };
  await expectOneLine(
    ['backtest', join(bad, 'missing')],
    /^target-health: .*missing: cannot read the directory \(ENOENT\)/,
  );
  await expectOneLine(['backtest', bad], /^target-health: .*: no scenarios in it/);

  // A truth file that fails the schema.
  const truth = { ...truthOf('sudden-wall'), expect: { pause: 'yes' } };
  writeFileSync(join(bad, 'wall.truth.json'), JSON.stringify(truth));
  copyFileSync(join(dir, 'sudden-wall.ndjson'), join(bad, 'wall.ndjson'));
  await expectOneLine(['backtest', bad], /^target-health: .*wall\.truth\.json: expect\.pause: /);

  // An events file with a bad line: named with its line number, after the scratch database is dropped.
  writeFileSync(join(bad, 'wall.truth.json'), JSON.stringify(truthOf('sudden-wall')));
  const lines = readFileSync(join(dir, 'sudden-wall.ndjson'), 'utf8').split('\n').slice(0, 1000);
  lines[41] = JSON.stringify({ ...(JSON.parse(lines[41]!) as object), statusCode: 200 });
  writeFileSync(join(bad, 'wall.ndjson'), `${lines.join('\n')}\n`);
  await expectOneLine(
    ['backtest', bad],
    joinRegExp(
      /^target-health: .*wall\.ndjson line 42: statusCode: unknown field; /,
      /did you mean "status"\?.*a scenario's events must all be valid$/,
    ),
  );

  // A malformed --config, and a bad --tick.
  const config = join(bad, 'config.json');
  writeFileSync(config, JSON.stringify({ scoring: { bands: { healthyMin: 'high' } } }));
  await expectOneLine(
    ['backtest', dir, '--config', config],
    /^target-health: --config .*config\.json: scoring\.bands\.healthyMin: /,
  );
  appendFileSync(config, '}');
  await expectOneLine(['backtest', dir, '--config', config], /^target-health: --config: .* is not valid JSON/);
  await expectOneLine(['backtest', dir, '--tick', 'often'], /^target-health: --tick: "often" is not a duration/);
  expect(await scratchDatabases()).toEqual(before);
}, 120_000);

test('a scenario written days ago is moved by whole days into the horizon; --keep leaves its database', async () => {
  const old = mkdtempSync(join(env('TH_TEST_DIR'), 'backtest-old-'));
  const end = new Date(Math.floor(Date.now() / MINUTE) * MINUTE - 5 * DAY - 3 * 3_600_000);
  const written = await run(
    CLI,
    ['simulate', 'low-traffic', '--days', '2', '--out', old, '--end', end.toISOString()],
    cleanEnv({}),
  );
  expect(written.code).toBe(0);
  const truth = JSON.parse(readFileSync(join(old, 'low-traffic.truth.json'), 'utf8')) as ScenarioTruth;
  const result = await cli(['backtest', old, '--json', '--keep', '--tick', '10m']);
  expect(result.code).toBe(0);
  const out = JSON.parse(result.stdout) as { scorecard: Scorecard; timings: ScenarioTiming[] };
  const [timing] = out.timings as [ScenarioTiming];
  expect(timing.shiftDays).toBe(5);
  expect(timing.ticks).toBe(144);
  expect(timing.database).toMatch(/^th_backtest_\d+_[0-9a-f]{8}_1$/);
  // The kept database holds the scenario, moved by exactly five days (the UTC time of day kept).
  const url = new URL(env('DATABASE_URL'));
  url.pathname = `/${timing.database}`;
  const kept = createPool(url.toString(), 1);
  try {
    const { rows } = await kept.query<{ first: Date; n: string }>(
      'SELECT min(ts) AS first, count(*) AS n FROM request_events WHERE site = $1',
      [truth.site],
    );
    expect(Number(rows[0]!.n)).toBe(timing.events);
    const firstEvent = JSON.parse(readFileSync(join(old, 'low-traffic.ndjson'), 'utf8').split('\n')[0]!) as {
      ts: string;
    };
    expect(rows[0]!.first.getTime()).toBe(Date.parse(firstEvent.ts) + 5 * DAY);
  } finally {
    await kept.end();
    await pool.query(`DROP DATABASE IF EXISTS ${timing.database} WITH (FORCE)`);
  }
  // Nothing else of that run was kept (its template is dropped).
  expect((await scratchDatabases()).filter((n) => n.startsWith(timing.database!.replace(/_1$/, '')))).toEqual([]);
}, 120_000);

test(
  'without DATABASE_URL: ' + 'on a private temporary PostgreSQL, removed at the end; --keep then needs DATABASE_URL',
  async () => {
    const before = await scratchDatabases();
    const noDb = (args: string[]) => run(CLI, args, cleanEnv({}));
    const tmpBefore = readdirSync(tmpdir()).filter((n) => n.startsWith('th-backtest-pg-'));
    const result = await noDb(['backtest', dir, '--json', '--tick', '10m']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const out = JSON.parse(result.stdout) as { scorecard: Scorecard };
    expect(out.scorecard.overall).toMatchObject({ scenarios: 2, missedPauses: 0, falsePauses: 0 });
    // The private server's folder is gone, and the live server got no scratch database.
    expect(readdirSync(tmpdir()).filter((n) => n.startsWith('th-backtest-pg-'))).toEqual(tmpBefore);
    expect(await scratchDatabases()).toEqual(before);

    const keep = await noDb(['backtest', dir, '--keep']);
    expect({ code: keep.code, stderr: keep.stderr.trim(), stdout: keep.stdout }).toEqual({
      code: 2,
      stderr: expect.stringMatching(/^target-health: --keep: needs DATABASE_URL/),
      stdout: '',
    });
  },
  300_000,
);

test('a DATABASE_URL user without CREATEDB is told so, and how to run without it', async () => {
  const role = `th_nocreatedb_${process.pid}`;
  const password = randomBytes(12).toString('hex');
  await pool.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}' NOCREATEDB`);
  try {
    const url = new URL(env('DATABASE_URL'));
    url.username = role;
    url.password = password;
    const r = await run(CLI, ['backtest', dir], cleanEnv({ DATABASE_URL: url.toString() }));
    expect({ code: r.code, lines: r.stderr.trim().split('\n').length }).toEqual({ code: 2, lines: 1 });
    expect(r.stderr).toMatch(
      /cannot create a scratch database .*CREATEDB\), or DATABASE_URL unset to run on a private temporary PostgreSQL/,
    );
    expect(r.stderr).not.toContain(password);
  } finally {
    await pool.query(`DROP ROLE ${role}`);
  }
}, 60_000);
