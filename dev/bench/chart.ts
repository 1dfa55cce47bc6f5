/**
 * `npm run bench:chart` — what charting 14 days of one site costs (target: ≤ 2 s). A scenario's 15 days
 * of traffic (`gradual-hostility`: quiet history, then hard blocks climbing to 90 %) are ingested through
 * the product's ingest path into a private embedded PostgreSQL; the last 14 days are replayed at 60 s
 * ticks and written as the live loop's history (test/kit/chart-history.ts: 20,160 assessments, its control
 * changes and alerts). Then the chart of those 14 days, five times each, median reported:
 *   - the data read alone (the baseline every other figure is a ratio of),
 *   - spec + SVG (Vega-Lite compile, Vega's headless View.toSVG) and PNG (resvg), in process,
 *   - `target-health chart` as a user runs it (a new process: start-up and module loading included).
 * The outputs are checked: the PNG decoded (size, distinct colours), the SVG parsed (its marks counted).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { load } from 'cheerio';
import { PNG } from 'pngjs';
import { readChartData } from '../../tools/charts/read-history';
import { renderSvg, svgToPng } from '../../tools/charts/render';
import { MARK_LAYERS } from '../../tools/charts/marks-panel';
import { buildChartSpec } from '../../tools/charts/spec';
import { TRAFFIC_LAYERS } from '../../tools/charts/traffic-panel';
import { generateScenario } from '../../core/scenarios';
import { recordReplayAsHistory } from '../../test/kit/chart-history';
import { cpuMs } from './proc-stats';
import { fmt, heading, ingestInBatches, line, median, seconds, startBenchDb } from './support';

const DAY = 86_400_000;
const RUNS = 5;
const TARGET_S = 2;
const CLI = join(__dirname, '..', '..', '..', 'client', 'bin', 'target-health.js');

function runCli(args: string[], databaseUrl: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: databaseUrl },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

/** Median wall time and CPU time of RUNS calls: this process's CPU, plus its exited children's (the CLI runs). */
async function timed<T>(f: () => Promise<T>): Promise<{ s: number; cpuS: number; value: T }> {
  const runs: number[] = [];
  const cpu: number[] = [];
  let value: T | undefined;
  for (let i = 0; i < RUNS; i++) {
    const c0 = cpuMs(process.pid, true);
    const t0 = process.hrtime.bigint();
    value = await f();
    runs.push(seconds(t0));
    cpu.push((cpuMs(process.pid, true) - c0) / 1000);
  }
  return { s: median(runs), cpuS: median(cpu), value: value! };
}

const both = (t: { s: number; cpuS: number }, base: { s: number }): string =>
  `${fmt(t.s * 1000, 0)} ms wall (${fmt(t.s / base.s, 2)}× the read), CPU ${fmt(t.cpuS * 1000, 0)} ms`;

async function main(): Promise<void> {
  const db = await startBenchDb();
  const dir = mkdtempSync(join(tmpdir(), 'th-bench-chart-'));
  try {
    const end = Math.floor(Date.now() / DAY) * DAY;
    const scenario = generateScenario('gradual-hostility', { end });
    const { site } = scenario.truth;
    heading(`A 14-day chart of ${site}`);
    let t0 = process.hrtime.bigint();
    const events = await ingestInBatches(db.pool, scenario.events);
    line('events ingested (15 days)', `${fmt(events)} in ${fmt(seconds(t0), 1)} s`);

    const from = end - 14 * DAY;
    t0 = process.hrtime.bigint();
    const history = await recordReplayAsHistory(db.pool, {
      site,
      from: new Date(from),
      to: new Date(end),
      tickMs: 60_000,
    });
    line(
      'history written (replayed at 60 s ticks)',
      `${fmt(history.assessments)} assessments, ${history.controlChanges} control changes, ` +
        `${history.notifications} alerts in ${fmt(seconds(t0), 1)} s`,
    );

    const read = await timed(() => readChartData(db.pool, site, from, end));
    const spec = await timed(() => Promise.resolve(buildChartSpec(read.value.data)));
    const svg = await timed(() => renderSvg(spec.value));
    const png = await timed(() => svgToPng(svg.value));
    const { resolution } = read.value.data;
    line(
      'buckets',
      `${read.value.data.scores.length} score, ${read.value.data.rates.length} signal ` +
        `(${resolution.bucketMs / 60_000} min, ${resolution.level} rollups)`,
    );
    line('load average (1 min) while measuring', fmt(loadavg()[0]!, 1));
    line(
      'data read (baseline), median of 5',
      `${fmt(read.s * 1000, 0)} ms wall, CPU ${fmt(read.cpuS * 1000, 0)} ms (Node only)`,
    );
    line('spec build', both(spec, read));
    line('Vega-Lite compile + Vega SVG render', both(svg, read));
    line('SVG → PNG (resvg, 2× scale)', both(png, read));
    const sum = (...ts: { s: number; cpuS: number }[]) => ({
      s: ts.reduce((n, t) => n + t.s, 0),
      cpuS: ts.reduce((n, t) => n + t.cpuS, 0),
    });
    line('SVG chart in process: read + spec + render', both(sum(read, spec, svg), read));
    line('PNG chart in process: read + spec + render + PNG', both(sum(read, spec, svg, png), read));

    const svgPath = join(dir, 'chart.svg');
    const pngPath = join(dir, 'chart.png');
    const cli = async (out: string): Promise<{ s: number; cpuS: number }> => {
      const r = await timed(() =>
        runCli(
          ['chart', site, '--from', new Date(from).toISOString(), '--to', new Date(end).toISOString(), '--out', out],
          db.databaseUrl,
        ),
      );
      if (r.value.code !== 0 || r.value.stderr !== '')
        throw new Error(`target-health chart exited ${r.value.code}: ${r.value.stderr}`);
      return r;
    };
    const cliSvg = await cli(svgPath);
    const cliPng = await cli(pngPath);
    line('`target-health chart … --out chart.svg` (new process)', both(cliSvg, read));
    line('`target-health chart … --out chart.png` (new process)', both(cliPng, read));

    const decoded = PNG.sync.read(readFileSync(pngPath));
    const colours = new Set<number>();
    for (let i = 0; i < decoded.data.length; i += 4) colours.add(decoded.data.readUInt32BE(i));
    const $ = load(readFileSync(svgPath, 'utf8'), { xml: true });
    const marks = (cls: string): number => $(`g.${cls}.role-mark > path`).length;
    const layer = (name: string, tag: string): number => $(`g.${name}_marks > ${tag}`).length;
    line('PNG decoded', `${decoded.width}×${decoded.height}, ${fmt(colours.size)} distinct colours`);
    line(
      'SVG parsed',
      `${$('svg').attr('width')}×${$('svg').attr('height')}; band rects ${layer('score_layer_0', 'path')}, ` +
        `traffic bars ${layer(TRAFFIC_LAYERS.other, 'path') + layer(TRAFFIC_LAYERS.errors, 'path')}, lines ` +
        `${marks('mark-line')}, rules ${$('g.mark-rule.role-mark > line').length}, points ${marks('mark-symbol')}, ` +
        `labels ${layer(MARK_LAYERS.labels, 'text')}`,
    );
    if (decoded.width < 1000 || colours.size < 50 || marks('mark-line') < 2)
      throw new Error('the chart is blank or malformed');
    const worst = Math.max(cliSvg.s, cliPng.s);
    const worstCpu = Math.max(cliSvg.cpuS, cliPng.cpuS);
    line(
      `target: ≤ ${TARGET_S} s for a 14-day chart (wall, as a user runs it)`,
      `${worst <= TARGET_S ? 'met' : 'MISSED'} (${fmt(worst, 2)} s; CPU ${fmt(worstCpu, 2)} s)`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await db.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
