/**
 * Helpers for the tests that run the Scrapy extension (packages/python, `target_health.scrapy`) with real Scrapy:
 * the package's folder, the Python venv it runs in (provisioned once per machine by stack/python-venv.ts),
 * and the end-to-end test's monitor spider as a child process whose JSON report lines are kept as they
 * come (packages/python/tests/scrapy/crawl/monitor_spider.py).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { ensurePythonVenv, type PythonVenv } from '../../stack/python-venv';
import { ROOT } from './processes';

/** The Python package `target-health` (its core, the Scrapy extension and the crawlee-python integration). */
export const PYTHON_PKG = join(ROOT, 'packages', 'python');
/** The Scrapy extension's tests and spiders, inside the package's tests. */
export const SCRAPY_TESTS = join(PYTHON_PKG, 'tests', 'scrapy');

export const progress = {
  info: (m: string) => process.stderr.write(`[python venv] ${m}\n`),
  warn: (m: string) => process.stderr.write(`[python venv] ${m}\n`),
};
const execFileAsync = promisify(execFile);

/** The Scrapy versions the extension supports and is tested on: the oldest (pyproject's floor) and the newest. */
export type ScrapyEdition = 'newest' | 'oldest';

const REQUIREMENTS: Record<ScrapyEdition, string> = {
  newest: 'requirements-scrapy.txt',
  oldest: 'requirements-scrapy-oldest.txt',
};

/** The Scrapy version of an edition, as its requirements file pins it. */
export function scrapyVersion(edition: ScrapyEdition): string {
  const m = /^scrapy==(\S+)/m.exec(readFileSync(join(PYTHON_PKG, REQUIREMENTS[edition]), 'utf8'));
  if (!m) throw new Error(`${REQUIREMENTS[edition]}: no scrapy== pin`);
  return m[1]!;
}

/**
 * The venv of a Scrapy edition (newest: with pytest, ruff and the build tools too); the first run on a machine
 * builds it (~30 s), later runs reuse it at once.
 */
export function scrapyVenv(edition: ScrapyEdition = 'newest'): Promise<PythonVenv> {
  return ensurePythonVenv(join(PYTHON_PKG, REQUIREMENTS[edition]), progress);
}

/** The package as a user gets it: its wheel and sdist, and the wheel installed into a folder of its own. */
export interface InstalledPythonPackage {
  wheel: string;
  sdist: string;
  /** Put on PYTHONPATH: the installed wheel (pure Python, so every venv of this interpreter can use it). */
  site: string;
  /** Removes the build and the install. */
  remove(): void;
}

/**
 * `python -m build` of packages/python (wheel and sdist, into a scratch folder: nothing is written
 * into the checkout), then `pip install --no-deps --target` of the wheel. The tests run Scrapy and
 * crawlee-python against that install, never against the source tree. `venv`: one with the build tools
 * (the newest Scrapy's); the wheel is pure Python, so every venv of the same interpreter can use it.
 */
export async function installPythonPackage(venv: PythonVenv): Promise<InstalledPythonPackage> {
  const scratch = mkdtempSync(join(tmpdir(), 'th-scrapy-wheel-'));
  const env = { ...process.env, PYTHONDONTWRITEBYTECODE: '1', PIP_DISABLE_PIP_VERSION_CHECK: '1' };
  try {
    const dist = join(scratch, 'dist');
    // --no-isolation: hatchling is in the test venv; nothing is downloaded for the build.
    await execFileAsync(venv.python, ['-m', 'build', '--no-isolation', '--outdir', dist, PYTHON_PKG], {
      env,
      cwd: scratch,
      maxBuffer: 16 << 20,
    });
    const files = readdirSync(dist);
    const wheel = files.find((f) => f.endsWith('-py3-none-any.whl'));
    const sdist = files.find((f) => f.endsWith('.tar.gz'));
    if (!wheel || !sdist)
      throw new Error(
        `python -m build made ${files.join(', ') || 'nothing'}; expected a py3-none-any wheel and an sdist`,
      );
    const site = join(scratch, 'site');
    await execFileAsync(
      venv.python,
      ['-m', 'pip', 'install', '--quiet', '--no-deps', '--no-cache-dir', '--target', site, join(dist, wheel)],
      { env, cwd: scratch },
    );
    return {
      wheel: join(dist, wheel),
      sdist: join(dist, sdist),
      site,
      remove: () => rmSync(scratch, { recursive: true, force: true }),
    };
  } catch (err) {
    rmSync(scratch, { recursive: true, force: true });
    throw err;
  }
}

/** The monitor spider's settings (TH_CONFIG). */
export interface MonitorConfig {
  hosts: string[];
  /** `http://dc-de:x@127.0.0.1:port`: the route is read from the user name. */
  proxyUrls: string[];
  chainsPerHost: number;
  canaryEveryS: number;
  reportEveryS?: number;
  items?: number;
}

/** A controls change as the spider heard it (the extension's `controls_changed` signal), with the time it did. */
export interface HeardControls {
  at: number;
  site: string;
  version: number;
  paused: boolean;
  canaryOnly: boolean;
  concurrencyLimit: number;
  band: string;
}

/** One report line of the monitor spider. */
export interface MonitorReport {
  at: number;
  final: boolean;
  /** Production pages whose callback ran, per host. */
  handled: Record<string, number>;
  /** Production attempts finished (callback or errback: a 403, a download error after the retries), per host. */
  finished: Record<string, number>;
  /** Scrapy's `target_health/*` stats, without the prefix (`events_sent`, `requests_held`…). */
  stats: Record<string, number>;
  /** Controls changes applied since the previous line. */
  heard: HeardControls[];
}

/** The monitor spider in a process of its own: `python -m scrapy runspider monitor_spider.py`. */
export class MonitorCrawl {
  readonly heard: HeardControls[] = [];
  readonly reports: MonitorReport[] = [];
  private readonly child: ChildProcess;
  private readonly exited: Promise<number | null>;
  private output = '';

  /** `installed`: the package's install folder (installPythonPackage), on the crawl's PYTHONPATH. */
  constructor(venv: PythonVenv, installed: string, config: MonitorConfig, api: { url: string; token: string }) {
    this.child = spawn(venv.python, ['-m', 'scrapy', 'runspider', join(SCRAPY_TESTS, 'crawl', 'monitor_spider.py')], {
      cwd: PYTHON_PKG,
      env: {
        ...process.env,
        PYTHONPATH: installed,
        PYTHONDONTWRITEBYTECODE: '1',
        TH_API_URL: api.url,
        TH_TOKEN: api.token,
        TH_CONFIG: JSON.stringify(config),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      // The reports are the JSON lines; anything else on stdout is not ours.
      if (!line.startsWith('{"at":')) return;
      const report = JSON.parse(line) as MonitorReport;
      this.heard.push(...report.heard);
      this.reports.push(report);
    });
    // Scrapy logs to stderr: the tail is kept for a failure's message.
    this.child.stderr!.on('data', (chunk: Buffer) => {
      this.output = (this.output + chunk.toString('utf8')).slice(-30_000);
    });
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }

  get last(): MonitorReport | undefined {
    return this.reports.at(-1);
  }

  /** The tail of Scrapy's log. */
  log(chars = 6_000): string {
    return this.output.slice(-chars);
  }

  /**
   * Production attempts per second Scrapy finished for `host` between `from` and `to` (ms since the
   * epoch), from its own counts: the last report at or before each end.
   */
  rate(host: string, from: number, to: number): number {
    const at = (t: number) => [...this.reports].reverse().find((r) => r.at <= t) ?? this.reports[0];
    const [a, b] = [at(from), at(to)];
    if (a === undefined || b === undefined || b.at <= a.at) return 0;
    return (((b.finished[host] ?? 0) - (a.finished[host] ?? 0)) * 1000) / (b.at - a.at);
  }

  /**
   * SIGTERM: Scrapy's graceful shutdown (in-flight requests finish, the extension sends what it holds), then the final
   * report.
   */
  async stop(timeoutMs = 90_000): Promise<MonitorReport> {
    this.child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([
      this.exited,
      new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs))),
    ]);
    clearTimeout(timer);
    if (code === 'timeout') {
      this.kill();
      throw new Error(`the Scrapy crawl did not stop within ${timeoutMs / 1000} s of SIGTERM; its log:\n${this.log()}`);
    }
    const last = this.last;
    if (code !== 0 || !last?.final)
      throw new Error(`the Scrapy crawl exited with ${code} without its final report; its log:\n${this.log()}`);
    return last;
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}
