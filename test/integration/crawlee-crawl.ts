/**
 * Runs a crawl with the adapter in a child process (crawlee-child.ts): Crawlee loads its HTTP client by
 * dynamic import(), which jest's module sandbox refuses. The child runs the TypeScript sources through
 * SWC, as jest does.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SiteControls } from '@target-health/crawler/controls/types';
import type { TargetHealthStats } from '@target-health/crawler/crawlee';
import type { ControlsMessage, RunMessage } from './crawlee-child';

export interface Done {
  crawlerStats: { requestsFinished: number; requestsFailed: number };
  events: Record<string, unknown>[];
  stats: TargetHealthStats;
  seen: { userPre: number; userPost: number; retriedSessionsUsable: boolean[]; failed: string[]; drops: boolean[] };
}

export interface Crawl {
  done: Promise<Done>;
  stats(): TargetHealthStats | undefined;
  controls(site: string, change: Partial<SiteControls>): void;
  /** Like controls(); resolves with the time (Date.now() in the crawler) the crawler had the change. */
  applyControls(site: string, change: Partial<SiteControls>): Promise<number>;
}

const children = new Set<ChildProcess>();
const registerDir = mkdtempSync(join(tmpdir(), 'th-crawlee-register-'));
/**
 * Lets the child run the TypeScript sources through SWC, as jest does (written here rather than kept as
 * a .js file in the repository, which the lint's TypeScript project would not cover).
 */
const REGISTER = join(registerDir, 'register.js');
writeFileSync(
  REGISTER,
  `const { transformSync } = require(${JSON.stringify(require.resolve('@swc/core'))});
const { readFileSync } = require('node:fs');
require.extensions['.ts'] = (module, filename) => {
  const jsc = { target: 'es2022', parser: { syntax: 'typescript' } };
  const { code } = transformSync(readFileSync(filename, 'utf8'), { filename, jsc, module: { type: 'commonjs' } });
  module._compile(code, filename);
};
`,
);

export function crawl(run: Omit<RunMessage, 'type'>): Crawl {
  const child = fork(join(__dirname, 'crawlee-child.ts'), [], {
    execArgv: ['-r', REGISTER],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.add(child);
  let latest: TargetHealthStats | undefined;
  const applied: Array<(at: number) => void> = [];
  const done = new Promise<Done>((resolve, reject) => {
    child.on(
      'message',
      (m: { type: string; stats?: TargetHealthStats; message?: string; at?: number } & Partial<Done>) => {
        if (m.type === 'progress') latest = m.stats;
        if (m.type === 'controls-applied') applied.shift()?.(m.at!);
        if (m.type === 'error') reject(new Error(m.message));
        if (m.type === 'done') {
          resolve(m as unknown as Done);
          child.kill();
        }
      },
    );
    child.on('exit', (code) => reject(new Error(`crawl child exited with ${code}`)));
  });
  child.send({ type: 'run', ...run } satisfies RunMessage);
  return {
    done,
    stats: () => latest,
    controls: (site, change) => child.send({ type: 'controls', site, change } satisfies ControlsMessage),
    applyControls: (site, change) =>
      new Promise<number>((resolve) => {
        applied.push(resolve);
        child.send({ type: 'controls', site, change } satisfies ControlsMessage);
      }),
  };
}

/** Kills crawls still running and removes the SWC hook. */
export function stopCrawls(): void {
  for (const c of children) c.kill();
  rmSync(registerDir, { recursive: true, force: true });
}
