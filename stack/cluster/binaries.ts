/**
 * The cluster stack's programs, built from source with `go install` into the per-machine tool cache on
 * first use (like the Temporal CLI: stack/temporal-cli.ts), never downloaded as binaries:
 *   - the Temporal server (go.temporal.io/server v1.29.1, cmd/server) and its SQL schema tool
 *     (cmd/tools/sql) → ~/.cache/target-health/temporal-server-v1.29.1/{temporal-server,temporal-sql-tool};
 *   - the Temporal UI server (github.com/temporalio/ui-server/v2 v2.42.1, cmd/server) →
 *     ~/.cache/target-health/temporal-ui-server-v2.42.1/temporal-ui-server, with the module's own
 *     config/docker.yaml beside it: the file the temporalio/ui:2.42.1 image runs with, read from the
 *     environment the same way (TEMPORAL_ADDRESS, TEMPORAL_UI_PORT, …).
 * The versions are docker-compose.yml's images' (test/unit/cluster-config.test.ts checks they agree).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../../core/common/user-error';
import { goInstall, type ProvisionLog } from '../go-install';
import { hasGo, isExecutable, toolCacheRoot } from '../temporal-cli';

export const TEMPORAL_SERVER_MODULE = 'go.temporal.io/server';
export const TEMPORAL_SERVER_VERSION = 'v1.29.1';
export const TEMPORAL_UI_SERVER_MODULE = 'github.com/temporalio/ui-server/v2';
export const TEMPORAL_UI_SERVER_VERSION = 'v2.42.1';

export interface ClusterBinaries {
  server: string;
  sqlTool: string;
  uiServer: string;
  /** The folder holding the UI server's docker.yaml (its `--config`). */
  uiConfigDir: string;
}

export function serverCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(toolCacheRoot(env), `temporal-server-${TEMPORAL_SERVER_VERSION}`);
}

export function uiServerCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(toolCacheRoot(env), `temporal-ui-server-${TEMPORAL_UI_SERVER_VERSION}`);
}

function requireGo(env: NodeJS.ProcessEnv, what: string): void {
  if (!hasGo(env))
    throw new UserError(
      `${what} is built from source with Go on first use, and \`go\` is not on PATH: install Go 1.25 or newer ` +
        `(or put it on PATH), then run again`,
    );
}

/** Where `go install` left the module's sources (GOMODCACHE). */
function moduleDir(module: string, version: string, env: NodeJS.ProcessEnv): string {
  const out = spawnSync('go', ['env', 'GOMODCACHE'], { env, encoding: 'utf8' });
  const modCache = out.stdout.trim();
  if (out.status !== 0 || modCache === '')
    throw new UserError(`go env GOMODCACHE failed: ${out.stderr.trim() || 'no output'}`);
  // (No upper-case letters in these module paths, so no `!` escaping to apply.)
  return join(modCache, `${module}@${version}`);
}

async function ensureServer(log: ProvisionLog, env: NodeJS.ProcessEnv): Promise<{ server: string; sqlTool: string }> {
  const dir = serverCacheDir(env);
  const server = join(dir, 'temporal-server');
  const sqlTool = join(dir, 'temporal-sql-tool');
  if (isExecutable(server) && isExecutable(sqlTool)) return { server, sqlTool };
  requireGo(env, `The Temporal server ${TEMPORAL_SERVER_VERSION}`);
  const built = await goInstall(
    {
      label: 'the Temporal server and its SQL tool',
      packages: [`${TEMPORAL_SERVER_MODULE}/cmd/server`, `${TEMPORAL_SERVER_MODULE}/cmd/tools/sql`],
      version: TEMPORAL_SERVER_VERSION,
      binaries: { server: 'temporal-server', sql: 'temporal-sql-tool' },
    },
    dir,
    log,
    env,
  );
  return { server: built['temporal-server']!, sqlTool: built['temporal-sql-tool']! };
}

async function ensureUiServer(
  log: ProvisionLog,
  env: NodeJS.ProcessEnv,
): Promise<{ uiServer: string; uiConfigDir: string }> {
  const dir = uiServerCacheDir(env);
  const uiServer = join(dir, 'temporal-ui-server');
  const uiConfigDir = join(dir, 'config');
  const config = join(uiConfigDir, 'docker.yaml');
  if (isExecutable(uiServer) && existsSync(config) && existsSync(join(uiConfigDir, 'base.yaml')))
    return { uiServer, uiConfigDir };
  requireGo(env, `The Temporal UI server ${TEMPORAL_UI_SERVER_VERSION}`);
  if (!isExecutable(uiServer)) {
    await goInstall(
      {
        label: 'the Temporal UI server',
        packages: [`${TEMPORAL_UI_SERVER_MODULE}/cmd/server`],
        version: TEMPORAL_UI_SERVER_VERSION,
        binaries: { server: 'temporal-ui-server' },
      },
      dir,
      log,
      env,
    );
  }
  // The image's configuration file, from the same module version the binary was built from.
  mkdirSync(uiConfigDir, { recursive: true });
  copyFileSync(
    join(moduleDir(TEMPORAL_UI_SERVER_MODULE, TEMPORAL_UI_SERVER_VERSION, env), 'config', 'docker.yaml'),
    config,
  );
  // Read before docker.yaml (which sets no host): a local stack's UI listens on the loopback only.
  writeFileSync(join(uiConfigDir, 'base.yaml'), 'host: 127.0.0.1\n');
  return { uiServer, uiConfigDir };
}

/** Finds the programs in the cache, or builds them (minutes, once per machine). */
export async function ensureClusterBinaries(
  log: ProvisionLog,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ClusterBinaries> {
  const server = await ensureServer(log, env);
  const ui = await ensureUiServer(log, env);
  return { ...server, ...ui };
}
