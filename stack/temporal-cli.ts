/**
 * Finds or provisions the Temporal CLI (which contains the dev server). One place, used by `npm start`,
 * the tests and CI, in this order:
 *   1. TEMPORAL_CLI_PATH, when set;
 *   2. `temporal` on PATH;
 *   3. the per-machine cache outside the clone (~/.cache/target-health/temporal-v1.5.1/temporal);
 *   4. with Go present: `go install github.com/temporalio/cli/cmd/temporal@v1.5.1` into that cache
 *      (v1.5.1 is the newest release `go install` accepts: later go.mod files carry `replace` lines);
 *   5. otherwise the Temporal SDK's own download of the dev server (needs internet).
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { UserError } from '../core/common/user-error';
import { type ProvisionLog, goInstall } from './go-install';

export const TEMPORAL_CLI_VERSION = 'v1.5.1';
export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal';

export type TemporalCli =
  | { kind: 'binary'; path: string; source: 'TEMPORAL_CLI_PATH' | 'PATH' | 'cache' | 'go install' }
  | { kind: 'sdk-download'; downloadDir: string };

export type { ProvisionLog };

/** The per-machine cache of provisioned tools, outside the clone (shared by every clone on the machine). */
export function toolCacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME && env.XDG_CACHE_HOME !== '' ? env.XDG_CACHE_HOME : join(homedir(), '.cache');
  return join(base, 'target-health');
}

export function temporalCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(toolCacheRoot(env), `temporal-${TEMPORAL_CLI_VERSION}`);
}

export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function findOnPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

export function hasGo(env: NodeJS.ProcessEnv): boolean {
  return spawnSync('go', ['version'], { env, stdio: 'ignore' }).status === 0;
}

export async function ensureTemporalCli(log: ProvisionLog, env: NodeJS.ProcessEnv = process.env): Promise<TemporalCli> {
  const explicit = env.TEMPORAL_CLI_PATH;
  if (explicit !== undefined && explicit !== '') {
    if (!isExecutable(explicit))
      throw new UserError(
        `TEMPORAL_CLI_PATH: "${explicit}" is not an executable file; point it at the temporal binary or unset it`,
      );
    return { kind: 'binary', path: explicit, source: 'TEMPORAL_CLI_PATH' };
  }
  const onPath = findOnPath('temporal', env);
  if (onPath) return { kind: 'binary', path: onPath, source: 'PATH' };

  const cacheDir = temporalCacheDir(env);
  const cached = join(cacheDir, 'temporal');
  if (isExecutable(cached)) return { kind: 'binary', path: cached, source: 'cache' };

  if (hasGo(env)) {
    const built = await goInstall(
      {
        label: 'the Temporal CLI',
        packages: [TEMPORAL_CLI_MODULE],
        version: TEMPORAL_CLI_VERSION,
        binaries: { temporal: 'temporal' },
      },
      cacheDir,
      log,
      env,
    );
    return { kind: 'binary', path: built.temporal!, source: 'go install' };
  }

  log.warn(
    'No temporal binary on PATH or in the cache, and no Go to build one: falling back to the Temporal SDK ' +
      'download (needs internet).',
  );
  mkdirSync(cacheDir, { recursive: true });
  return { kind: 'sdk-download', downloadDir: cacheDir };
}
