/**
 * `target-health chart` as a user runs it, on a simulated wall (`simulate` + `ingest`) whose loop history
 * is written through the loop's db functions (test/kit/chart-history.ts: a replay of six hours around the
 * wall, a person's stop): the SVG parsed, its marks, labels and traffic bars counted against the database,
 * the PNG decoded, a file replaced whole; bad input refused with one line naming the flag, exit 2, nothing
 * written.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from 'cheerio';
import { PNG } from 'pngjs';
import { MARK_LAYERS } from '../../tools/charts/marks-panel';
import { BAND_COLOURS, CHART_WIDTH } from '../../tools/charts/spec';
import { TRAFFIC_LAYERS } from '../../tools/charts/traffic-panel';
import { ALL_ROUTES } from '../../server/db/signal-store/aggregate';
import { createPool, type Pool } from '../../server/db/pool';
import type { ScenarioTruth } from '../../core/scenarios/truth';
import { recordReplayAsHistory, type RecordedHistory } from '../kit/chart-history';
import { CLI, cleanEnv, run } from '../kit/processes';
import { env } from '../kit/services';
import { simulateAndIngest } from '../kit/simulated-site';
import { joinRegExp } from '../kit/regexp';

const M = 60_000;
const H = 60 * M;
let pool: Pool;
let dir: string;
let site: string;
let truth: ScenarioTruth;
let history: RecordedHistory;
let from: string;
let to: string;
const db = () => cleanEnv({ DATABASE_URL: env('DATABASE_URL') });
const chart = (args: string[]) => run(CLI, ['chart', ...args], db());

beforeAll(async () => {
  pool = createPool(env('DATABASE_URL'), 2);
  ({ site, dir, truth } = await simulateAndIngest('sudden-wall', 'wall'));
  const onset = Date.parse(truth.onset!);
  from = new Date(onset - 3 * H).toISOString();
  to = new Date(onset + 3 * H).toISOString();
  history = await recordReplayAsHistory(pool, {
    site,
    from: new Date(from),
    to: new Date(to),
    tickMs: M,
    decisions: [
      {
        at: new Date(onset + 2 * H + 30_000).toISOString(),
        kind: 'stop',
        who: 'alice@example.com',
        why: 'the site walls us off',
      },
    ],
  });
}, 180_000);
afterAll(async () => pool.end());

test('the history the chart is drawn from: healthy, then paused by the wall, until a person stops the loop', () => {
  // Six hours of 60 s ticks, until the person's stop ends the loop two hours after the wall.
  expect(history.assessments).toBe(history.result.ticks.length);
  expect(history.assessments).toBe(301);
  const bands = history.result.ticks.map((t) => t.band);
  expect(bands[0]).toBe('healthy');
  expect(bands).toContain('resisting');
  expect(bands[bands.length - 1]).toBe('resisting');
  expect(history.notifications).toBeGreaterThan(0);
  expect(history.decisions).toBe(1);
});

test(
  'SVG: parsed, with the band shading, score and signal lines, and one labelled point per decision, alert and ' +
    'control change',
  async () => {
    const out = join(dir, 'wall.svg');
    const r = await chart([site, '--from', from, '--to', to, '--out', out]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `wrote ${out}: ${site}, ${history.assessments} assessments and ${r.stdout.match(/and (\d+) requests/)![1]} ` +
        `requests in 1 min buckets (minute rollups), ${r.stdout.match(/, (\d+) marks/)![1]} marks\n`,
    );

    const { rows } = await pool.query<{ n: string }>(
      `SELECT (SELECT count(*) FROM decisions WHERE site = $1 AND decided_at >= $2 AND decided_at < $3)
          + (SELECT count(*) FROM notifications WHERE site = $1 AND created_at >= $2 AND created_at < $3)
          + (SELECT count(*) FROM control_audit WHERE site = $1 AND changed_at >= $2 AND changed_at < $3) AS n`,
      [site, from, to],
    );
    const marks = Number(rows[0]!.n);
    expect(marks).toBeGreaterThanOrEqual(3);
    expect(r.stdout).toContain(`, ${marks} marks`);

    const $ = load(readFileSync(out, 'utf8'), { xml: true });
    const svg = $('svg').first();
    expect(svg.attr('xmlns')).toBe('http://www.w3.org/2000/svg');
    expect(Number(svg.attr('width'))).toBeGreaterThan(1000);
    expect($('text').text()).toContain(site);
    // Band shading: healthy, resisting and stopped periods, in their colours.
    const fills = $('g.mark-rect.role-mark > path')
      .map((_, p) => $(p).attr('fill'))
      .get();
    expect(fills).toEqual(expect.arrayContaining([BAND_COLOURS.healthy, BAND_COLOURS.resisting, BAND_COLOURS.stopped]));
    // Lines: raw and smoothed score, three signals, latency.
    expect($('g.mark-line.role-mark > path').length).toBe(6);
    // One point per stored event, in its kind's row, at its time (the tooltip's, to the minute).
    const points = $(`g.${MARK_LAYERS.points}_marks > path`).toArray();
    expect($('g.mark-symbol.role-mark > path').length).toBe(marks);
    expect(points).toHaveLength(marks);
    const px = (t: number) => ((t - Date.parse(from)) / (Date.parse(to) - Date.parse(from))) * CHART_WIDTH;
    for (const p of points) {
      const title = $(p).children('title').text();
      const at = /^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}) UTC — /.exec(title);
      expect(at).not.toBeNull();
      const x = Number(/translate\(([-\d.e]+),/.exec(p.attribs.transform!)![1]);
      const minute = Date.parse(`${at![1]!.replace(' ', 'T')}:00Z`);
      expect(x).toBeGreaterThanOrEqual(px(minute) - 1e-6);
      expect(x).toBeLessThan(px(minute + M));
    }
    // Labels on the chart itself: the person's stop in the decisions row and the change it made, the loop's pause.
    const labels = $(`g.${MARK_LAYERS.labels}_marks > text`)
      .toArray()
      .map((t) => ({
        text: $(t)
          .contents()
          .filter((_, n) => n.nodeType === 3)
          .text(),
        tooltip: $(t).children('title').text(),
      }));
    expect(labels.every((l) => l.text !== '' && l.tooltip !== '')).toBe(true);
    expect(labels.filter((l) => l.text === 'stopped by alice@example.com')).toHaveLength(2);
    expect(labels.map((l) => l.text)).toContain('paused');
    // Every decision and notification is named by a label's tooltip (one line per mark it labels).
    const { rows: named } = await pool.query<{ n: string }>(
      `SELECT (SELECT count(*) FROM decisions WHERE site = $1 AND decided_at >= $2 AND decided_at < $3)
          + (SELECT count(*) FROM notifications WHERE site = $1 AND created_at >= $2 AND created_at < $3) AS n`,
      [site, from, to],
    );
    const lines = labels.flatMap((l) => l.tooltip.split('\n'));
    expect(lines.filter((l) => !/ — \S+ in \d+ steps: | by (control-loop|human:)/.test(l))).toHaveLength(
      Number(named[0]!.n),
    );
    // Volume and errors: a bar per minute with requests, its red part for the minutes with errors.
    const { rows: minutes } = await pool.query<{ requests: string; errors: string }>(
      `SELECT requests, errors FROM rollup_minute WHERE site = $1 AND route_key = $2 AND bucket >= $3 AND bucket < $4`,
      [site, ALL_ROUTES, from, to],
    );
    const withRequests = minutes.filter((m) => Number(m.requests) > Number(m.errors)).length;
    expect(withRequests).toBeGreaterThan(100);
    expect($(`g.${TRAFFIC_LAYERS.other}_marks > path`).length).toBe(withRequests);
    expect($(`g.${TRAFFIC_LAYERS.errors}_marks > path`).length).toBe(
      minutes.filter((m) => Number(m.errors) > 0).length,
    );
    // Every time on an axis: HH:MM, or a date (YYYY-MM-DD) beside it.
    const axisLines = $('g.role-axis-label tspan')
      .toArray()
      .map((t) => $(t).text());
    expect(axisLines.length).toBeGreaterThan(10);
    for (const l of axisLines) expect(l).toMatch(/^(\d{2}:\d{2}|\d{4}-\d{2}-\d{2}|)$/);
    // Thresholds (80, 50), the decision over the score, and the daily normals (two signals + latency at least).
    expect($('g.mark-rule.role-mark > line').length).toBeGreaterThanOrEqual(2 + 1 + 3);
  },
  60_000,
);

test('times as `history` takes them: a time ago for --from', async () => {
  const out = join(dir, 'relative.svg');
  // Hours back from now to an hour before the scenario's start: the same assessments as from..to.
  const hoursAgo = Math.ceil((Date.now() - Date.parse(from)) / H) + 1;
  const r = await chart([site, '--from', `-${hoursAgo}h`, '--to', to, '--out', out]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(r.stdout).toContain(`${site}, ${history.assessments} assessments`);
}, 60_000);

test('PNG over three days: decoded, twice the SVG size, far from blank; a second chart replaces it whole', async () => {
  const out = join(dir, 'three-days.png');
  const end = Date.parse(truth.incident.to);
  const args = [
    site,
    '--from',
    new Date(end - 3 * 24 * H).toISOString(),
    '--to',
    new Date(end).toISOString(),
    '--out',
    out,
  ];
  const r = await chart(args);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/in 15 min buckets \(minute rollups\)/);
  const png = PNG.sync.read(readFileSync(out));
  expect(png.width).toBeGreaterThan(2000);
  expect(png.height).toBeGreaterThan(800);
  const colours = new Set<number>();
  for (let i = 0; i < png.data.length; i += 4) colours.add(png.data.readUInt32BE(i));
  expect(colours.size).toBeGreaterThan(200);

  writeFileSync(out, 'an older file');
  const again = await chart(args);
  expect(again.code).toBe(0);
  expect(PNG.sync.read(readFileSync(out)).width).toBe(png.width);
  expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
}, 60_000);

test.each([
  [
    'an unknown site',
    ['nobody-here.example.com', '--from', '2026-11-24', '--to', '2026-11-25', '--out', '@dir/a.svg'],
    /^target-health: site: nobody-here\.example\.com is unknown here/,
  ],
  [
    'a bad site',
    ['not a host', '--from', '2026-11-24', '--to', '2026-11-25', '--out', '@dir/a.svg'],
    /^target-health: site: /,
  ],
  [
    'a relative time that reaches before 1970',
    ['@site', '--from', '-99999999d', '--to', '2026-11-25', '--out', '@dir/a.svg'],
    /^target-health: --from: "-99999999d" reaches back before 1970/,
  ],
  [
    'a malformed time',
    ['@site', '--from', 'yesterday', '--to', '2026-11-25', '--out', '@dir/a.svg'],
    /^target-health: --from: "yesterday" is not a time/,
  ],
  [
    '--to before --from',
    ['@site', '--from', '2026-11-25', '--to', '2026-11-24', '--out', '@dir/a.svg'],
    /^target-health: --to: 2026-11-24 must be after --from 2026-11-25/,
  ],
  [
    'an empty range',
    ['@site', '--from', '2026-11-25', '--to', '2026-11-25', '--out', '@dir/a.svg'],
    /^target-health: --to: 2026-11-25 must be after --from 2026-11-25/,
  ],
  [
    'a range longer than the day rollups are kept',
    ['@site', '--from', '2020-01-01', '--to', '2026-01-01', '--out', '@dir/a.svg'],
    /^target-health: --from\/--to: 2192 days; chart at most 800 days/,
  ],
  [
    'a period without data',
    ['@site', '--from', '2021-01-01', '--to', '2021-01-02', '--out', '@dir/a.svg'],
    joinRegExp(
      /^target-health: --from\/--to: \S+ has no assessments and no traffic in /,
      /\[2021-01-01T00:00:00\.000Z, 2021-01-02T00:00:00\.000Z\)/,
    ),
  ],
  [
    'no --out',
    ['@site', '--from', '2026-11-24', '--to', '2026-11-25'],
    /^target-health: --out: required, the file to write, ending in \.svg or \.png/,
  ],
  [
    'an unsupported extension',
    ['@site', '--from', '2026-11-24', '--to', '2026-11-25', '--out', '@dir/a.jpg'],
    /^target-health: --out: ".*a\.jpg" must end in \.svg or \.png/,
  ],
  [
    'a folder that does not exist',
    ['@site', '--from', '2026-11-24', '--to', '2026-11-25', '--out', '@dir/missing/a.svg'],
    /^target-health: --out: cannot write into ".*missing" \(ENOENT\); choose an existing folder you can write to/,
  ],
  [
    'a folder as --out',
    ['@site', '--from', '2026-11-24', '--to', '2026-11-25', '--out', '@dir/sub.png'],
    /^target-health: --out: ".*sub\.png" is a folder; name a file in it/,
  ],
])(
  '%s: one line naming the flag, exit 2, nothing written',
  async (_name, rawArgs, message) => {
    const bad = mkdtempSync(join(dir, 'bad-'));
    mkdirSync(join(bad, 'sub.png'));
    const args = rawArgs.map((a) => (a === '@site' ? site : a.replace('@dir', bad)));
    const r = await chart(args);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(readdirSync(bad)).toEqual(['sub.png']);
    expect(existsSync(join(bad, 'a.svg'))).toBe(false);
  },
  60_000,
);
