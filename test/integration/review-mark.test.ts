/**
 * `review <site> --incident T --mark right|false-alarm --why …` as a user runs it, on a simulated challenge wave
 * with the loop's history written through its db functions (as in review-cli.test.ts): the mark is stored in
 * incident_marks with who, why and the incident's window as the review finds it, and said in one line; a second
 * mark adds a row. Bad input — an unknown verdict, no --why, a time with no incident — is one line, exit 2, no row.
 */
import { recordReplayAsHistory } from '../kit/chart-history';
import { marksBetween } from '../../server/db/incident-marks';
import { createPool, type Pool } from '../../server/db/pool';
import { CLI, cleanEnv, run } from '../kit/processes';
import { env } from '../kit/services';
import { simulateAndIngest } from '../kit/simulated-site';

const M = 60_000;
const H = 60 * M;
let pool: Pool;
let site: string;
let onset: number;
const db = () => cleanEnv({ DATABASE_URL: env('DATABASE_URL') });
const review = (args: string[]) => run(CLI, ['review', site, ...args], db());
const rows = () => marksBetween(pool, site, new Date(0), new Date(Date.now() + H));

beforeAll(async () => {
  pool = createPool(env('DATABASE_URL'), 2);
  const s = await simulateAndIngest('challenge-wave', 'mark');
  site = s.site;
  onset = Date.parse(s.truth.onset!);
  await recordReplayAsHistory(pool, {
    site,
    from: new Date(onset - 2 * H),
    to: new Date(onset + 7 * H),
    tickMs: M,
    decisions: [{ at: new Date(onset + 5 * H + 40 * M).toISOString(), kind: 'resume', who: 'alice', why: 'over' }],
  });
}, 300_000);
afterAll(async () => pool.end());

test('bad input: one line naming the flag, exit 2, no mark', async () => {
  const at = new Date(onset + H).toISOString();
  const cases: [string[], RegExp][] = [
    [['--incident', at, '--mark', 'maybe', '--why', 'x'], /--mark: "maybe" is not a verdict; give --mark right or/],
    [['--incident', at, '--mark', 'right'], /--why: required with --mark/],
    [['--incident', new Date(onset - 20 * H).toISOString(), '--mark', 'right', '--why', 'x'], /--incident: .* did not/],
  ];
  for (const [args, line] of cases) {
    const r = await review(args);
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: '' });
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(line);
  }
  expect(await rows()).toEqual([]);
}, 120_000);

test('a mark is stored with who, why and the incident’s window; marking again adds a row', async () => {
  const at = new Date(onset + H);
  const r = await review([
    '--incident',
    at.toISOString(),
    '--mark',
    'false-alarm',
    '--why',
    'their deploy',
    '--who',
    'carol',
  ]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(
    /^marked the incident of \S+ from \S+ to \S+ false-alarm \(by carol at \S+\): their deploy\n$/,
  );
  const [mark] = await rows();
  expect(mark).toMatchObject({ site, verdict: 'false_alarm', who: 'carol', why: 'their deploy' });
  expect(mark!.incidentAt.getTime()).toBe(at.getTime());
  expect(mark!.incidentFrom!.getTime()).toBeLessThanOrEqual(onset + 15 * M);
  expect(mark!.incidentTo!.getTime()).toBeGreaterThan(onset + 5 * H);
  await review(['--incident', at.toISOString(), '--mark', 'right', '--why', 'on second thought', '--who', 'dave']);
  expect((await rows()).map((m) => [m.verdict, m.who])).toEqual([
    ['false_alarm', 'carol'],
    ['right', 'dave'],
  ]);
}, 120_000);
