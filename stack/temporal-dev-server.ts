/**
 * Runs the Temporal dev server (`temporal server start-dev`) with the product's search attributes
 * registered: a SQLite file for `npm start` (workflows survive a restart) and in memory for tests;
 * the web UI for `npm start`, headless for tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { Connection } from '@temporalio/client';
import { ALL_SEARCH_ATTRIBUTE_KEYS } from '../loop/search-attributes';
import { localTemporalUiUrl } from '../server/config/env';
import { UserError } from '../core/common/user-error';
import { isPortInUse } from './free-port';
import { isRunning, processCommandLine, stopLeftover } from './leftover-process';
import { withParentDeathSignal } from './parent-death';
import type { TemporalCli } from './temporal-cli';

export interface DevServerOptions {
  cli: TemporalCli;
  port: number;
  /** Undefined: headless. */
  uiPort?: number;
  /** Undefined: in memory. */
  dbFile?: string;
  namespace: string;
  /** Where the server's own output goes. */
  logFile: string;
  /**
   * Where its pid is kept while it runs (`npm start`): a server an earlier start left running on the same
   * SQLite file is stopped before this one starts. Undefined: none (tests' servers in memory).
   */
  pidFile?: string;
  /** One-line notices (a leftover server stopped). */
  log?: { info(message: string): void };
}

export interface DevServerHandle {
  address: string;
  uiUrl?: string;
  pid?: number;
  stop(): Promise<void>;
}

/** `--search-attribute` values use the CLI's type names. */
const CLI_TYPE_NAMES: Record<string, string> = {
  KEYWORD: 'Keyword',
  INT: 'Int',
  BOOL: 'Bool',
  TEXT: 'Text',
  DOUBLE: 'Double',
  DATETIME: 'Datetime',
  KEYWORD_LIST: 'KeywordList',
};

function searchAttributeFlags(): string[] {
  return ALL_SEARCH_ATTRIBUTE_KEYS.flatMap((key) => [
    '--search-attribute',
    `${key.name}=${CLI_TYPE_NAMES[key.type] ?? key.type}`,
  ]);
}

async function waitUntilServing(
  address: string,
  namespace: string,
  child: ChildProcess | undefined,
  logFile: string,
): Promise<void> {
  const deadline = Date.now() + 60_000;
  let lastError = '';
  while (Date.now() < deadline) {
    if (child && child.exitCode !== null) {
      throw new UserError(`the Temporal dev server exited with code ${child.exitCode} before serving; see ${logFile}`);
    }
    try {
      const connection = await Connection.connect({ address, connectTimeout: 2_000 });
      try {
        await connection.workflowService.describeNamespace({ namespace });
        return;
      } finally {
        await connection.close();
      }
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  throw new UserError(
    `the Temporal dev server did not become ready at ${address} within 60 s (${lastError}); see ${logFile}`,
  );
}

/**
 * The dev server an earlier start of this data folder left running (its pid file names a live
 * `temporal server start-dev` on the same SQLite file): stopped (SIGTERM, its clean stop) before ours
 * starts on the same file and port. After a kill -9 of the stack it is already stopping (its parent-death
 * signal); this waits for it.
 */
async function stopLeftoverServer(
  pidFile: string,
  dbFile: string | undefined,
  log: DevServerOptions['log'],
): Promise<void> {
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  const command = Number.isInteger(pid) && pid > 0 && isRunning(pid) ? processCommandLine(pid) : undefined;
  if (command !== undefined && command.includes('start-dev') && (dbFile === undefined || command.includes(dbFile))) {
    log?.info(
      `the Temporal dev server of ${dbFile ?? 'this stack'} is still running (pid ${pid}), left by an earlier ` +
        `start: stopping it and starting it anew`,
    );
    if (!(await stopLeftover(pid, 'SIGTERM', 'SIGKILL', 15_000)))
      throw new UserError(
        `the Temporal dev server (pid ${pid}) of an earlier start did not stop; stop it, then start again`,
      );
  }
  rmSync(pidFile, { force: true });
}

export async function startTemporalDevServer(options: DevServerOptions): Promise<DevServerHandle> {
  const address = `127.0.0.1:${options.port}`;
  if (options.pidFile !== undefined) await stopLeftoverServer(options.pidFile, options.dbFile, options.log);
  if (await isPortInUse(options.port)) {
    throw new UserError(
      `TEMPORAL_PORT: port ${options.port} is already in use (another \`npm start\` or Temporal server?); stop ` +
        `it or choose another port`,
    );
  }
  if (options.uiPort !== undefined && (await isPortInUse(options.uiPort))) {
    throw new UserError(
      `TEMPORAL_UI_PORT: port ${options.uiPort} is already in use; stop what uses it or choose another port`,
    );
  }
  if (options.dbFile) mkdirSync(dirname(options.dbFile), { recursive: true });
  mkdirSync(dirname(options.logFile), { recursive: true });
  const uiUrl = options.uiPort !== undefined ? localTemporalUiUrl(options.uiPort) : undefined;

  if (options.cli.kind === 'sdk-download') return startWithSdkDownload(options, address, uiUrl);

  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(options.port),
    '--namespace',
    options.namespace,
    '--log-level',
    'warn',
    ...(options.uiPort !== undefined ? ['--ui-port', String(options.uiPort)] : ['--headless']),
    ...(options.dbFile ? ['--db-filename', options.dbFile] : []),
    ...searchAttributeFlags(),
  ];
  const log = createWriteStream(options.logFile, { flags: 'a' });
  // Its own process group: a terminal's Ctrl-C reaches only us, and we stop the server after the
  // worker has drained, not before. SIGTERM (its clean stop) when we die (stack/parent-death.ts).
  const command = withParentDeathSignal(options.cli.path, args, 'SIGTERM');
  const child = spawn(command.command, command.args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const pidFile = options.pidFile;
  if (pidFile !== undefined && child.pid !== undefined) writeFileSync(pidFile, `${child.pid}\n`);
  // If this process exits without a clean stop (an uncaught error, process.exit elsewhere), take the
  // server down with it: no orphaned dev servers holding the port.
  const killOnExit = (): void => {
    if (child.exitCode === null) child.kill('SIGTERM');
  };
  process.on('exit', killOnExit);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await waitUntilServing(address, options.namespace, child, options.logFile);
  } catch (err) {
    killOnExit();
    if (pidFile !== undefined) rmSync(pidFile, { force: true });
    throw err;
  }
  return {
    address,
    ...(uiUrl ? { uiUrl } : {}),
    ...(child.pid !== undefined ? { pid: child.pid } : {}),
    stop: async () => {
      process.removeListener('exit', killOnExit);
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(force);
      }
      if (pidFile !== undefined) rmSync(pidFile, { force: true });
      log.end();
    },
  };
}

/** Last resort on a machine with internet but neither a temporal binary nor Go. */
async function startWithSdkDownload(
  options: DevServerOptions,
  address: string,
  uiUrl: string | undefined,
): Promise<DevServerHandle> {
  if (options.cli.kind !== 'sdk-download') throw new Error('unreachable');
  const { TestWorkflowEnvironment } = await import('@temporalio/testing');
  let env;
  try {
    env = await TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'cached-download', downloadDir: options.cli.downloadDir },
        ip: '127.0.0.1',
        port: options.port,
        namespace: options.namespace,
        ui: options.uiPort !== undefined,
        ...(options.uiPort !== undefined ? { uiPort: options.uiPort } : {}),
        ...(options.dbFile ? { dbFilename: options.dbFile } : {}),
        searchAttributes: [...ALL_SEARCH_ATTRIBUTE_KEYS],
      },
    });
  } catch (err) {
    throw new UserError(
      `could not download the Temporal dev server (${err instanceof Error ? err.message : String(err)}); ` +
        `install Go (then \`npm start\` builds it) or put the temporal CLI on PATH`,
    );
  }
  return { address, ...(uiUrl ? { uiUrl } : {}), stop: () => env.teardown() };
}
