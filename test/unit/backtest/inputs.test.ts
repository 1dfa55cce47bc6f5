/** The backtest's inputs: a scenario directory, the loop settings file, and moving a scenario in time. */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loopConfigFor, readConfigSettings } from '../../../tools/backtest/config-file';
import { readScenarioDir } from '../../../tools/backtest/scenario-dir';
import { DAY_MS, shiftDaysFor, shiftEventLine, shiftTruth, spanProblem } from '../../../tools/backtest/time-shift';
import type { ScenarioTruth } from '../../../core/scenarios/truth';
import { joinRegExp } from '../../kit/regexp';

const made: string[] = [];
const tempDir = (prefix: string): string => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
};
afterAll(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

const TRUTH: ScenarioTruth = {
  scenario: 'sudden-wall',
  site: 'sudden-wall.sim.example',
  description: 'a wall',
  cause: 'hard_block',
  expectedTopReason: 'hard_block',
  history: { from: '2026-03-01T12:00:00.000Z', to: '2026-03-15T12:00:00.000Z' },
  incident: { from: '2026-03-15T12:00:00.000Z', to: '2026-03-16T12:00:00.000Z' },
  onset: '2026-03-16T02:13:20.000Z',
  hardBlocks50At: '2026-03-16T02:15:00.000Z',
  refused50At: '2026-03-16T02:15:00.000Z',
  expect: { pause: true, degrade: true, routeAlert: null, parserAlert: false },
};

describe('moving a scenario into the store horizon', () => {
  test('whole days, so that the incident ends within the last day before now', () => {
    const end = Date.parse(TRUTH.incident.to);
    expect(shiftDaysFor(TRUTH, end)).toBe(0);
    expect(shiftDaysFor(TRUTH, end + DAY_MS - 1)).toBe(0);
    expect(shiftDaysFor(TRUTH, end + 5 * DAY_MS + 3_600_000)).toBe(5);
    // Written with an end in the future: moved back.
    expect(shiftDaysFor(TRUTH, end - 1)).toBe(-1);
  });

  test('every time of the truth moves, the UTC time of day stays', () => {
    const moved = shiftTruth(TRUTH, 5);
    expect(moved.onset).toBe('2026-03-21T02:13:20.000Z');
    expect(moved.incident).toEqual({ from: '2026-03-20T12:00:00.000Z', to: '2026-03-21T12:00:00.000Z' });
    expect(moved.history.from).toBe('2026-03-06T12:00:00.000Z');
    expect(moved.hardBlocks50At).toBe('2026-03-21T02:15:00.000Z');
    expect(shiftTruth({ ...TRUTH, onset: null, hardBlocks50At: null }, 2)).toMatchObject({
      onset: null,
      hardBlocks50At: null,
    });
  });

  test('an event line: ts read as ingest reads it, written back in its own form; anything else untouched', () => {
    const iso = JSON.stringify({ ts: '2026-03-16T03:00:00.5+02:00', site: 'a.example', status: 200, latencyMs: 1 });
    expect(JSON.parse(shiftEventLine(iso, DAY_MS))).toEqual({
      ts: '2026-03-17T01:00:00.500Z',
      site: 'a.example',
      status: 200,
      latencyMs: 1,
    });
    const epoch = JSON.stringify({
      ts: Date.parse('2026-03-16T03:00:00Z'),
      site: 'a.example',
      status: 403,
      latencyMs: 1,
    });
    expect(JSON.parse(shiftEventLine(epoch, 2 * DAY_MS)).ts).toBe(Date.parse('2026-03-18T03:00:00Z'));
    for (const bad of [
      '{"ts": oops',
      '[1,2]',
      JSON.stringify({ ts: '2026-02-30T00:00:00Z', site: 'a.example', status: 200, latencyMs: 1 }),
      JSON.stringify({ ts: 'now', site: 'a.example' }),
    ]) {
      expect(shiftEventLine(bad, DAY_MS)).toBe(bad);
    }
  });

  test('a scenario longer than the store keeps is refused, naming history.from', () => {
    expect(spanProblem(TRUTH)).toBeUndefined();
    expect(spanProblem({ ...TRUTH, history: { ...TRUTH.history, from: '2026-02-10T12:00:00.000Z' } })).toMatch(
      /^history\.from: the scenario spans 34\.0 days; .* at most 29 days fit/,
    );
  });
});

describe('a scenario directory', () => {
  const fresh = () => tempDir('th-backtest-dir-');
  const write = (dir: string, name: string, truth: unknown = TRUTH, events = '') => {
    writeFileSync(join(dir, `${name}.truth.json`), typeof truth === 'string' ? truth : JSON.stringify(truth));
    writeFileSync(join(dir, `${name}.ndjson`), events);
  };

  test('pairs of truth and events, validated, in name order; other files ignored', async () => {
    const dir = fresh();
    write(dir, 'b', { ...TRUTH, scenario: 'b' });
    write(dir, 'a', { ...TRUTH, scenario: 'a' });
    writeFileSync(join(dir, 'README.md'), 'notes');
    writeFileSync(join(dir, 'c.ndjson.123.tmp'), '');
    const found = await readScenarioDir(dir);
    expect(found.map((f) => [f.name, f.truth.scenario, f.eventsPath])).toEqual([
      ['a', 'a', join(dir, 'a.ndjson')],
      ['b', 'b', join(dir, 'b.ndjson')],
    ]);
  });

  test('each mistake is one line naming the file and the field', async () => {
    await expect(readScenarioDir('/nonexistent/th')).rejects.toThrow(
      joinRegExp(
        /^\/nonexistent\/th: cannot read the directory \(ENOENT\); /,
        /write one with `target-health simulate all --out <dir>`$/,
      ),
    );
    const file = join(fresh(), 'x');
    writeFileSync(file, '');
    await expect(readScenarioDir(file)).rejects.toThrow(/: is not a directory; give the directory of a scenario set/);
    const empty = fresh();
    mkdirSync(join(empty, 'sub'));
    await expect(readScenarioDir(empty)).rejects.toThrow(
      /: no scenarios in it \(no <name>\.truth\.json with a <name>\.ndjson\)/,
    );

    const bad = fresh();
    write(bad, 'wall', { ...TRUTH, cause: 'wall', onset: 'yesterday' });
    await expect(readScenarioDir(bad)).rejects.toThrow(
      new RegExp(`^${join(bad, 'wall.truth.json')}: .*cause: .*onset: `),
    );
    const notJson = fresh();
    write(notJson, 'wall', '{"scenario": ');
    await expect(readScenarioDir(notJson)).rejects.toThrow(/wall\.truth\.json: not valid JSON \(/);
    const backwards = fresh();
    write(backwards, 'wall', { ...TRUTH, incident: { from: TRUTH.incident.to, to: TRUTH.incident.from } });
    await expect(readScenarioDir(backwards)).rejects.toThrow(
      /wall\.truth\.json: incident\.to: must be after incident\.from/,
    );
    const lone = fresh();
    writeFileSync(join(lone, 'wall.ndjson'), '');
    await expect(readScenarioDir(lone)).rejects.toThrow(/wall\.ndjson: no wall\.truth\.json beside it/);
    const loneTruth = fresh();
    writeFileSync(join(loneTruth, 'wall.truth.json'), JSON.stringify(TRUTH));
    await expect(readScenarioDir(loneTruth)).rejects.toThrow(/wall\.truth\.json: no wall\.ndjson beside it/);
  });

  test('an onset in the history is fine (a slow creep), one after the incident is not', async () => {
    const dir = fresh();
    write(dir, 'creep', { ...TRUTH, onset: '2026-03-12T12:00:00.000Z' });
    await expect(readScenarioDir(dir)).resolves.toHaveLength(1);
    write(dir, 'creep', { ...TRUTH, onset: TRUTH.incident.to });
    await expect(readScenarioDir(dir)).rejects.toThrow(/creep\.truth\.json: onset: must be before incident\.to/);
  });
});

describe('the loop settings', () => {
  const file = (content: string) => {
    const path = join(tempDir('th-backtest-config-'), 'config.json');
    writeFileSync(path, content);
    return path;
  };

  test("defaults, or a file as for start --config; the site and the tick are the backtest's", async () => {
    const defaults = loopConfigFor(await readConfigSettings(undefined), undefined, 'a.sim.example', 60_000, 't.json');
    expect(defaults).toMatchObject({
      site: 'a.sim.example',
      tickIntervalMs: 60_000,
      policy: { concurrency: { nominal: 16 } },
    });
    const path = file(
      JSON.stringify({ site: 'other.example', tickIntervalMs: 5_000, policy: { concurrency: { nominal: 8 } } }),
    );
    const custom = loopConfigFor(await readConfigSettings(path), path, 'a.sim.example', 30_000, 't.json');
    expect(custom).toMatchObject({
      site: 'a.sim.example',
      tickIntervalMs: 30_000,
      policy: { concurrency: { nominal: 8 } },
    });
  });

  test('a malformed file names --config and the field; a site the loop refuses names the truth file', async () => {
    await expect(readConfigSettings('/nonexistent/c.json')).rejects.toThrow(
      /^--config: cannot read "\/nonexistent\/c\.json" \(ENOENT\)$/,
    );
    await expect(readConfigSettings(file('{oops'))).rejects.toThrow(/^--config: ".*config\.json" is not valid JSON \(/);
    await expect(readConfigSettings(file('[1]'))).rejects.toThrow(/must hold a JSON object/);
    const path = file(JSON.stringify({ policy: { concurrency: { nominal: 0 } }, windw: {} }));
    expect(() =>
      loopConfigFor(
        JSON.parse('{"policy": {"concurrency": {"nominal": 0}}, "windw": {}}') as Record<string, unknown>,
        path,
        'a.sim.example',
        60_000,
        't.json',
      ),
    ).toThrow(new RegExp(`^--config ${path}: .*policy\\.concurrency\\.nominal: expected a concurrency`));
    expect(() => loopConfigFor({}, undefined, 'Not A Host!', 60_000, '/d/x.truth.json')).toThrow(
      /^\/d\/x\.truth\.json: site: /,
    );
  });
});
