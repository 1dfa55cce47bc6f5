/**
 * Builds Go programs with `go install <package>@<version>` into the per-machine tool cache (outside the
 * clone, shared by every clone on the machine): into a staging folder first, then each binary moved into
 * place by one rename, so a build that fails or is killed never leaves a half-written binary behind.
 * A heartbeat line every 20 s shows that a long build is alive and what it is doing.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../core/common/user-error';

export interface ProvisionLog {
  info(message: string): void;
  warn(message: string): void;
}

export interface GoProgram {
  /** What a person reads in progress lines ("the Temporal CLI"). */
  label: string;
  /** The packages `go install` builds, all from one module and version. */
  packages: readonly string[];
  version: string;
  /** The binary `go install` writes for each package (its last path element) → the name it gets in the cache. */
  binaries: Readonly<Record<string, string>>;
}

/** Runs the build; resolves to each binary's path in `cacheDir` (by its cache name). */
export async function goInstall(
  program: GoProgram,
  cacheDir: string,
  log: ProvisionLog,
  env: NodeJS.ProcessEnv,
): Promise<Record<string, string>> {
  const staging = join(cacheDir, `.staging-${process.pid}`);
  mkdirSync(staging, { recursive: true });
  log.info(
    `Building ${program.label} ${program.version} with \`go install\` into ${cacheDir} — first run on this ` +
      `machine only; it takes a few minutes.`,
  );
  const started = Date.now();
  let lastLine = '';
  let lastLineAt = started;
  const targets = program.packages.map((p) => `${p}@${program.version}`);
  const child = spawn('go', ['install', ...targets], {
    env: { ...env, GOBIN: staging },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const onOutput = (chunk: Buffer): void => {
    const lines = chunk.toString('utf8').trim().split('\n');
    lastLine = lines[lines.length - 1] ?? lastLine;
    lastLineAt = Date.now();
  };
  child.stdout.on('data', onOutput);
  child.stderr.on('data', onOutput);
  const heartbeat = setInterval(() => {
    const secs = Math.round((Date.now() - started) / 1000);
    // go prints its downloads, then compiles silently for minutes: a stale last line is not what it is doing.
    const doing =
      Date.now() - lastLineAt < 20_000 ? lastLine : lastLine ? `compiling (after: ${lastLine})` : 'compiling';
    log.info(`still building ${program.label} (${secs}s)${doing ? `: ${doing}` : ''}`);
  }, 20_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearInterval(heartbeat);
  const built = Object.keys(program.binaries).map((name) => join(staging, name));
  if (code !== 0 || !built.every((b) => existsSync(b))) {
    rmSync(staging, { recursive: true, force: true });
    throw new UserError(`go install ${targets.join(' ')} failed (exit ${code}): ${lastLine || 'no output'}`);
  }
  const paths: Record<string, string> = {};
  for (const [name, as] of Object.entries(program.binaries)) {
    const target = join(cacheDir, as);
    renameSync(join(staging, name), target);
    paths[as] = target;
  }
  rmSync(staging, { recursive: true, force: true });
  log.info(
    `${program.label} built in ${Math.round((Date.now() - started) / 1000)}s: ${Object.values(paths).join(', ')}`,
  );
  return paths;
}
