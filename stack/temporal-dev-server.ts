/**
 * Runs the Temporal dev server (`temporal server start-dev`) with the product's search attributes
 * registered: a SQLite file for `npm start` (workflows survive a restart) and in memory for tests;
 * the web UI for `npm start`, headless for tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Connection } from '@temporalio/client';
import { ALL_SEARCH_ATTRIBUTE_KEYS } from '../common/search-attributes';
import { localTemporalUiUrl } from '../config/env';
import { UserError } from '../common/user-error';
import { isPortInUse } from './free-port';
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
}

export interface DevServerHandle {
  address: string;
  uiUrl?: string;
  pid?: number;
  stop(): Promise<void>;
}

/** `--search-attribute` values use the CLI's type names. */
const CLI_TYPE_NAMES: Record<string, string> = { KEYWORD: 'Keyword', INT: 'Int', BOOL: 'Bool', TEXT: 'Text', DOUBLE: 'Double', DATETIME: 'Datetime', KEYWORD_LIST: 'KeywordList' };

function searchAttributeFlags(): string[] {
  return ALL_SEARCH_ATTRIBUTE_KEYS.flatMap((key) => ['--search-attribute', `${key.name}=${CLI_TYPE_NAMES[key.type] ?? key.type}`]);
}

async function waitUntilServing(address: string, namespace: string, child: ChildProcess | undefined, logFile: string): Promise<void> {
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
  throw new UserError(`the Temporal dev server did not become ready at ${address} within 60 s (${lastError}); see ${logFile}`);
}

export async function startTemporalDevServer(options: DevServerOptions): Promise<DevServerHandle> {
  const address = `127.0.0.1:${options.port}`;
  if (await isPortInUse(options.port)) {
    throw new UserError(`TEMPORAL_PORT: port ${options.port} is already in use (another \`npm start\` or Temporal server?); stop it or choose another port`);
  }
  if (options.uiPort !== undefined && (await isPortInUse(options.uiPort))) {
    throw new UserError(`TEMPORAL_UI_PORT: port ${options.uiPort} is already in use; stop what uses it or choose another port`);
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
  // worker has drained, not before.
  const child = spawn(options.cli.path, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
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
      log.end();
    },
  };
}

/** Last resort on a machine with internet but neither a temporal binary nor Go. */
async function startWithSdkDownload(options: DevServerOptions, address: string, uiUrl: string | undefined): Promise<DevServerHandle> {
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
      `could not download the Temporal dev server (${err instanceof Error ? err.message : String(err)}); install Go (then \`npm start\` builds it) or put the temporal CLI on PATH`,
    );
  }
  return { address, ...(uiUrl ? { uiUrl } : {}), stop: () => env.teardown() };
}
