/**
 * `target-health simulate` as a user runs it: a scenario written to a directory with its truth, then
 * loaded with `ingest` into the real PostgreSQL with the default time base (the current hour), every
 * line stored; events to stdout with the truth aside; and bad input refused with one line naming the
 * flag, exit 2 and nothing written.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPool, type Pool } from '../../server/db/pool';
import { scenarioTruthSchema } from '../../core/scenarios/truth';
import { CLI, cleanEnv, run } from '../kit/processes';
import { env } from '../kit/services';

let pool: Pool;
let dir: string;
beforeAll(() => {
  pool = createPool(env('DATABASE_URL'), 2);
  dir = mkdtempSync(join(env('TH_TEST_DIR'), 'simulate-'));
});
afterAll(async () => pool.end());

test(
  'simulate sudden-wall --out dir, then ingest the file: ' + 'every line stored, refusals classified from the content',
  async () => {
    // A site of its own, so a re-run or another test's traffic never mixes in.
    const site = `wall-${randomUUID().slice(0, 8)}.sim.example`;
    const out = join(dir, 'wall');
    const simulated = await run(
      CLI,
      ['simulate', 'sudden-wall', '--days', '2', '--site', site, '--out', out],
      cleanEnv({}),
    );
    expect(simulated.stderr).toBe('');
    expect(simulated.code).toBe(0);
    expect(simulated.stdout).toMatch(
      /^sudden-wall: [\d,]+ events → .*sudden-wall\.ndjson, truth → .*sudden-wall\.truth\.json/,
    );
    expect(readdirSync(out).sort()).toEqual(['sudden-wall.ndjson', 'sudden-wall.truth.json']);

    const truth = scenarioTruthSchema.parse(JSON.parse(readFileSync(join(out, 'sudden-wall.truth.json'), 'utf8')));
    expect(truth).toMatchObject({ scenario: 'sudden-wall', site, cause: 'hard_block', expect: { pause: true } });
    // The default end is the current UTC hour: the incident day ends within the last hour.
    expect(Date.now() - Date.parse(truth.incident.to)).toBeLessThan(3_600_000);
    expect(Date.now() - Date.parse(truth.incident.to)).toBeGreaterThanOrEqual(0);

    const lines = readFileSync(join(out, 'sudden-wall.ndjson'), 'utf8').trimEnd().split('\n').length;
    const ingested = await run(
      CLI,
      ['ingest', join(out, 'sudden-wall.ndjson'), '--json'],
      cleanEnv({ DATABASE_URL: env('DATABASE_URL') }),
    );
    expect(ingested.stderr).toBe('');
    expect(ingested.code).toBe(0);
    expect(JSON.parse(ingested.stdout)).toMatchObject({ lines, accepted: lines, inserted: lines, rejected: 0 });

    const { rows } = await pool.query<{ outcome: string; n: string }>(
      'SELECT outcome, count(*) AS n FROM request_events WHERE site = $1 GROUP BY outcome',
      [site],
    );
    const byOutcome = Object.fromEntries(rows.map((r) => [r.outcome, Number(r.n)]));
    expect(Object.values(byOutcome).reduce((a, b) => a + b, 0)).toBe(lines);
    // After the onset 97 % of requests hit the wall: the Cloudflare block pages are found as hard blocks.
    const after = await pool.query<{ share: number }>(
      "SELECT avg((outcome = 'hard_block')::int)::float8 AS share FROM request_events WHERE site = $1 AND ts >= " +
        "$2::timestamptz + interval '1 minute'",
      [site, truth.onset],
    );
    expect(after.rows[0]!.share).toBeGreaterThan(0.9);
  },
);

test('events to stdout, the truth to --truth; the output ingests (dry run)', async () => {
  const truthFile = join(dir, 'low.truth.json');
  const simulated = await run(
    CLI,
    ['simulate', 'low-traffic', '--days', '2', '--seed', '5', '--truth', truthFile],
    cleanEnv({}),
  );
  expect(simulated.code).toBe(0);
  expect(simulated.stderr).toBe('');
  const truth = scenarioTruthSchema.parse(JSON.parse(readFileSync(truthFile, 'utf8')));
  expect(truth.site).toBe('low-traffic.sim.example');
  const lines = simulated.stdout.trimEnd().split('\n');
  expect(lines.length).toBeGreaterThan(1_000);
  expect(JSON.parse(lines[0]!)).toMatchObject({ eventId: 'low-traffic-5-0', site: 'low-traffic.sim.example' });
  const checked = await run(CLI, ['ingest', '-', '--dry-run', '--json'], cleanEnv({}), simulated.stdout);
  expect(checked.code).toBe(0);
  expect(JSON.parse(checked.stdout)).toMatchObject({ accepted: lines.length, rejected: 0 });
});

test('simulate list names every scenario with its description', async () => {
  const listed = await run(CLI, ['simulate', 'list'], cleanEnv({}));
  expect(listed.code).toBe(0);
  const names = listed.stdout
    .trimEnd()
    .split('\n')
    .map((l) => l.split(/\s+/)[0]);
  expect(names).toEqual(expect.arrayContaining(['sudden-wall', 'dead-pool', 'redesign', 'quiet', 'low-traffic']));
  expect(names).toHaveLength(15);
});

test.each([
  [['nope', '--out', 'X'], /^target-health: scenario: unknown scenario "nope"; one of quiet, .*, or all, or list\n$/],
  [['all'], /^target-health: --out: `simulate all` writes two files per scenario; give --out <dir>\n$/],
  [['quiet', '--days', '1', '--out', 'X'], /^target-health: --days: "1" must be a whole number from 2 to 29 /],
  [
    ['quiet', '--seed', 'abc', '--out', 'X'],
    /^target-health: --seed: "abc" must be a whole number from 0 to 4294967295 /,
  ],
  [
    ['quiet', '--end', '2026-02-30T00:00:00Z', '--out', 'X'],
    /^target-health: --end: "2026-02-30T00:00:00Z" is not a time; use ISO-8601 /,
  ],
  [['quiet', '--end', '2026-03-01T12:00:30Z', '--out', 'X'], /^target-health: --end: must be a time on a whole minute/],
  [['quiet', '--site', 'not a host', '--out', 'X'], /^target-health: --site: must be a host name/],
  [['all', '--site', 'a.example.com', '--out', 'X'], /^target-health: --site: cannot be used with all/],
])('bad input %j: one line naming the flag, exit 2, nothing written', async (args, message) => {
  const target = join(dir, `bad-${randomUUID().slice(0, 8)}`);
  const result = await run(CLI, ['simulate', ...args.map((a) => (a === 'X' ? target : a))], cleanEnv({}));
  expect(result.code).toBe(2);
  expect(result.stderr).toMatch(message);
  expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(result.stdout).toBe('');
  expect(existsSync(target)).toBe(false);
});
