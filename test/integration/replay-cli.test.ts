/**
 * `target-health replay` as a user runs it, over a simulated incident loaded with `ingest`: the table
 * and its summary, NDJSON, two settings compared, a person's resume replayed across the pause; nothing
 * written to the live tables; bad input refused with one line naming the flag or field, exit 2.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPool, type Pool } from '../../server/db/pool';
import type { ReplaySummary, ReplayTick } from '../../tools/replay/types';
import type { ScenarioTruth } from '../../core/scenarios/truth';
import { CLI, cleanEnv, run } from '../kit/processes';
import { joinRegExp } from '../kit/regexp';
import { env } from '../kit/services';
import { simulateAndIngest } from '../kit/simulated-site';

let pool: Pool;
let dir: string;
let site: string;
let truth: ScenarioTruth;
let from: string;
let to: string;
const db = () => cleanEnv({ DATABASE_URL: env('DATABASE_URL') });
const replay = (args: string[]) => run(CLI, ['replay', site, ...args], db());

beforeAll(async () => {
  pool = createPool(env('DATABASE_URL'), 2);
  ({ site, dir, truth } = await simulateAndIngest('sudden-wall', 'wall'));
  // Half an hour before the wall to an hour after it.
  from = new Date(Date.parse(truth.onset!) - 30 * 60_000).toISOString();
  to = new Date(Date.parse(truth.onset!) + 60 * 60_000).toISOString();
}, 120_000);
afterAll(async () => pool.end());

function ndjson(stdout: string): { ticks: ReplayTick[]; summary: ReplaySummary } {
  const lines = stdout
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const last = lines.pop() as { summary: ReplaySummary };
  return { ticks: lines as unknown as ReplayTick[], summary: last.summary };
}

test('a table of what happened and a summary; --json gives every tick; nothing is written', async () => {
  const table = await replay(['--from', from, '--to', to]);
  expect(table.stderr).toBe('');
  expect(table.code).toBe(0);
  expect(table.stdout).toMatch(/^time\s+tick\s+score \/ smoothed/);
  // The wall scores about 65: a refusal rule pauses it, and the band column and the notice say which.
  expect(table.stdout).toMatch(
    joinRegExp(
      / resisting \(paused by the (majority|total)-refusal rule\) +\S*hard_block\S* .*notify resisting: /,
      /\S+ is resisting: paused by the (majority|total)-refusal rule; score \d+, smoothed \d+ — /,
    ),
  );
  expect(table.stdout).toMatch(/period\s+.* 90 ticks of 1 min$/m);

  const json = await replay(['--from', from, '--to', to, '--json']);
  expect(json.code).toBe(0);
  const { ticks, summary } = ndjson(json.stdout);
  expect(ticks).toHaveLength(90);
  expect(ticks.map((t) => t.tick)).toEqual(Array.from({ length: 90 }, (_, i) => i + 1));
  // On the grid, a minute apart; healthy before the wall, paused after it.
  expect(Date.parse(ticks[1]!.asOf) - Date.parse(ticks[0]!.asOf)).toBe(60_000);
  expect(ticks.filter((t) => Date.parse(t.asOf) <= Date.parse(truth.onset!)).every((t) => t.band === 'healthy')).toBe(
    true,
  );
  expect(summary.firstPauseAt).not.toBeNull();
  expect(Date.parse(summary.firstPauseAt!)).toBeGreaterThan(Date.parse(truth.onset!));
  const paused = ticks.find((t) => t.asOf === summary.firstPauseAt)!;
  expect(paused).toMatchObject({ band: 'resisting', controls: { paused: true } });
  expect(paused.notices.map((n) => n.kind)).toContain('resisting');
  // The text summary says the same.
  expect(table.stdout).toContain(`first pause   ${summary.firstPauseAt!.replace('T', ' ').replace(':00.000Z', 'Z')}`);

  const { rows } = await pool.query<{ n: string }>(
    `SELECT (SELECT count(*) FROM assessments WHERE site = $1) + (SELECT count(*) FROM site_controls WHERE site = $1)
          + (SELECT count(*) FROM notifications WHERE site = $1) + (SELECT count(*) FROM control_audit WHERE site = $1)
          AS n`,
    [site],
  );
  expect(Number(rows[0]!.n)).toBe(0);
}, 120_000);

test(
  '--compare: without the refusal rules the wall pauses later or never, ' + 'and the differences are listed',
  async () => {
    const slow = join(dir, 'slow.json');
    // Both rules: either alone pauses a 97 % wall as soon (majority refusal needs half, total 90 %).
    writeFileSync(
      slow,
      JSON.stringify({ scoring: { totalRefusal: { enabled: false }, majorityRefusal: { enabled: false } } }),
    );
    const r = await replay(['--from', from, '--to', to, '--compare', slow]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^A = defaults\nB = .*slow\.json/);
    expect(r.stdout).toMatch(/(1 tick differs|\d+ ticks differ), [1-9]\d* in band, reasons, controls or notices:/);
    const pauses = [...r.stdout.matchAll(/first pause +(.+)/g)].map((m) =>
      m[1] === '—' ? Infinity : Date.parse(m[1]!.replace(' ', 'T')),
    );
    expect(pauses).toHaveLength(2);
    expect(pauses[0]).toBeLessThan(Infinity);
    expect(pauses[1]!).toBeGreaterThan(pauses[0]!);
  },
  120_000,
);

test('--decisions: a resume after the pause is applied at its time; the loop judges the site afresh', async () => {
  const { summary } = ndjson((await replay(['--from', from, '--to', to, '--json'])).stdout);
  const resumeAt = new Date(Date.parse(summary.firstPauseAt!) + 5 * 60_000 + 30_000).toISOString();
  const file = join(dir, 'decisions.json');
  writeFileSync(
    file,
    JSON.stringify([
      { at: resumeAt, kind: 'resume', who: 'alice@example.com', why: 'checked with the site', mode: 'cautious' },
    ]),
  );
  const r = await replay(['--from', from, '--to', to, '--decisions', file, '--json']);
  expect(r.stderr).toBe('');
  const { ticks } = ndjson(r.stdout);
  const next = ticks.find((t) => Date.parse(t.asOf) >= Date.parse(resumeAt))!;
  expect(next.decisions).toEqual([`${resumeAt} resume by alice@example.com`]);
  // The wall is still there: judged afresh from the decision on, the site is paused again later.
  const before = ticks[ticks.indexOf(next) - 1]!;
  expect(before.awaitingSince).not.toBeNull();
  expect(
    ticks
      .slice(ticks.indexOf(next))
      .some((t) => t.awaitingSince !== null && Date.parse(t.awaitingSince) > Date.parse(resumeAt)),
  ).toBe(true);
}, 120_000);

test.each([
  [
    'an unknown site',
    ['replay', 'nobody-here.example.com', '--from', '2026-11-24', '--to', '2026-11-25'],
    /^target-health: site: nobody-here\.example\.com is unknown here/,
  ],
  ['no --from', ['replay', '@site', '--to', '2026-11-25'], /^target-health: --from: required/],
  [
    'a malformed time',
    ['replay', '@site', '--from', 'yesterday', '--to', '2026-11-25'],
    /^target-health: --from: "yesterday" is not a time/,
  ],
  [
    '--to before --from',
    ['replay', '@site', '--from', '2026-11-25', '--to', '2026-11-24'],
    /^target-health: --to: 2026-11-24 must be after --from 2026-11-25/,
  ],
  [
    'an empty range',
    ['replay', '@site', '--from', '2026-11-25', '--to', '2026-11-25'],
    /^target-health: --to: 2026-11-25 must be after --from/,
  ],
  [
    'a range with no tick',
    ['replay', '@site', '--from', '2026-11-25T10:00:10Z', '--to', '2026-11-25T10:00:50Z'],
    /^target-health: --from\/--to: no tick of the 60s grid/,
  ],
  [
    'a bad tick',
    ['replay', '@site', '--from', '2026-11-25', '--to', '2026-11-26', '--tick', 'often'],
    /^target-health: --tick: "often" is not a duration/,
  ],
  [
    'a config file that is not JSON',
    ['replay', '@site', '--from', '2026-11-25', '--to', '2026-11-26', '--config', '@bad-json'],
    /^target-health: --config: ".*bad\.json" is not valid JSON/,
  ],
  [
    'a config with a bad field',
    ['replay', '@site', '--from', '2026-11-25', '--to', '2026-11-26', '--config', '@bad-field'],
    /^target-health: --config .*bad-field\.json: scoring\.smoothing\.halfLifeMs: expected a positive number/,
  ],
  [
    'a decisions file with a bad kind',
    ['replay', '@site', '--from', '2026-11-25', '--to', '2026-11-26', '--decisions', '@bad-kind'],
    /^target-health: --decisions .*bad-kind\.json: \[0\]\.kind: expected one of resume, stop, pause/,
  ],
  [
    'a decision without who',
    ['replay', '@site', '--from', '2026-11-25', '--to', '2026-11-26', '--decisions', '@no-who'],
    /^target-health: --decisions .*no-who\.json: \[1\]: pause: who: required/,
  ],
])('%s: one line naming the flag or field, exit 2', async (_name, rawArgs, message) => {
  writeFileSync(join(dir, 'bad.json'), '{"scoring": ');
  writeFileSync(join(dir, 'bad-field.json'), JSON.stringify({ scoring: { smoothing: { halfLifeMs: -1 } } }));
  writeFileSync(
    join(dir, 'bad-kind.json'),
    JSON.stringify([{ at: '2026-11-25T10:00:00Z', kind: 'unpause', who: 'a', why: 'b' }]),
  );
  writeFileSync(
    join(dir, 'no-who.json'),
    JSON.stringify([
      { at: '2026-11-25T10:00:00Z', kind: 'stop', who: 'a', why: 'b' },
      { at: '2026-11-25T11:00:00Z', kind: 'pause', why: 'b' },
    ]),
  );
  const files: Record<string, string> = {
    '@bad-json': join(dir, 'bad.json'),
    '@bad-field': join(dir, 'bad-field.json'),
    '@bad-kind': join(dir, 'bad-kind.json'),
    '@no-who': join(dir, 'no-who.json'),
  };
  const args = rawArgs.map((a) => (a === '@site' ? site : (files[a] ?? a)));
  const r = await run(CLI, args, db());
  expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: '' });
  expect(r.stderr).toMatch(message);
  expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
});
