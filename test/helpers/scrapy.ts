/**
 * Helpers for the tests that run the Scrapy extension (integrations/scrapy) with real Scrapy: the
 * package's folder, the Python venv it runs in (provisioned once per machine by stack/python-venv.ts),
 * and the end-to-end test's monitor spider as a child process whose JSON report lines are kept as they
 * come (integrations/scrapy/tests/crawl/monitor_spider.py).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ensureScrapyVenv, type PythonVenv } from '../../stack/python-venv';
import { ROOT } from './processes';

export const SCRAPY_PKG = join(ROOT, 'integrations', 'scrapy');

const progress = { info: (m: string) => process.stderr.write(`[scrapy venv] ${m}\n`), warn: (m: string) => process.stderr.write(`[scrapy venv] ${m}\n`) };

/** The venv with Scrapy and pytest; the first run on a machine builds it (~30 s), later runs reuse it at once. */
export function scrapyVenv(): Promise<PythonVenv> {
  return ensureScrapyVenv(join(SCRAPY_PKG, 'requirements-test.txt'), progress);
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

  constructor(venv: PythonVenv, config: MonitorConfig, api: { url: string; token: string }) {
    this.child = spawn(venv.python, ['-m', 'scrapy', 'runspider', join(SCRAPY_PKG, 'tests', 'crawl', 'monitor_spider.py')], {
      cwd: SCRAPY_PKG,
      env: { ...process.env, PYTHONPATH: join(SCRAPY_PKG, 'src'), PYTHONDONTWRITEBYTECODE: '1', TH_API_URL: api.url, TH_TOKEN: api.token, TH_CONFIG: JSON.stringify(config) },
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

  /** SIGTERM: Scrapy's graceful shutdown (in-flight requests finish, the extension sends what it holds), then the final report. */
  async stop(timeoutMs = 90_000): Promise<MonitorReport> {
    this.child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([this.exited, new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)))]);
    clearTimeout(timer);
    if (code === 'timeout') {
      this.kill();
      throw new Error(`the Scrapy crawl did not stop within ${timeoutMs / 1000} s of SIGTERM; its log:\n${this.log()}`);
    }
    const last = this.last;
    if (code !== 0 || !last?.final) throw new Error(`the Scrapy crawl exited with ${code} without its final report; its log:\n${this.log()}`);
    return last;
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}
