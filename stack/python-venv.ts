/**
 * Provisions the Python environments the crawler integrations' tests run in (packages/python): one
 * venv per requirements file, in the per-machine tool cache, named after the file's first pin
 * (`scrapy==2.19.0` → ~/.cache/target-health/venv-scrapy-2.19.0), built once with `pip install -r` and
 * reused by every clone and test run. Each Scrapy version the extension supports (oldest and newest) and
 * crawlee-python have a requirements file of their own.
 *
 * - Rebuilt when the requirements change: the venv records the hash of the requirements file (and the
 *   interpreter's version) in a marker written last, so a half-built venv is never taken for a good one.
 * - Two jest workers (or two clones) never build it at once: a lock directory (mkdir is atomic) with the
 *   builder's pid; a lock whose process is gone is taken over.
 * - The package itself is not installed into the shared venv: the cache is shared by every clone on the
 *   machine, so each test installs the wheel it built into a folder of its own (PYTHONPATH).
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../core/common/user-error';
import { type ProvisionLog, toolCacheRoot } from './temporal-cli';

const MARKER = '.th-requirements';
const LOCK_WAIT_MS = 15 * 60_000;

export interface PythonVenv {
  /** The venv's interpreter: run `python -m pytest`, `python -m scrapy` with it. */
  python: string;
  dir: string;
  /** Whether this call built the venv (false: reused), and how long it took. */
  built: boolean;
  ms: number;
}

/** The first `name==version` pin of a requirements file: what the venv is named after. */
export function firstPin(requirements: string, file: string): { name: string; version: string } {
  for (const line of requirements.split('\n')) {
    const m = /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([A-Za-z0-9.+!-]+)\s*(?:#.*)?$/.exec(line);
    if (m) return { name: m[1]!.toLowerCase(), version: m[2]! };
  }
  throw new UserError(`${file}: no pinned requirement (name==version) to name its venv after`);
}

export function pythonVenvDir(pin: { name: string; version: string }, env: NodeJS.ProcessEnv = process.env): string {
  return join(toolCacheRoot(env), `venv-${pin.name}-${pin.version}`);
}

/** The base interpreter: TH_PYTHON, else python3; Scrapy 2.13+ and crawlee-python need Python 3.10+. */
function basePython(env: NodeJS.ProcessEnv): { path: string; version: string } {
  const path = env.TH_PYTHON !== undefined && env.TH_PYTHON !== '' ? env.TH_PYTHON : 'python3';
  const probe = spawnSync(path, ['-c', 'import sys; print("%d.%d.%d" % sys.version_info[:3])'], {
    env,
    encoding: 'utf8',
  });
  if (probe.status !== 0) {
    throw new UserError(
      `TH_PYTHON: cannot run "${path}" (${probe.error?.message ?? probe.stderr.trim()}); install Python 3.10+ ` +
        `or set TH_PYTHON to its interpreter`,
    );
  }
  const version = probe.stdout.trim();
  const [major = 0, minor = 0] = version.split('.').map(Number);
  if (major < 3 || (major === 3 && minor < 10))
    throw new UserError(
      `TH_PYTHON: "${path}" is Python ${version}; the crawler integrations need Python 3.10+ (set TH_PYTHON to ` +
        `a newer interpreter)`,
    );
  return { path, version };
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the lock directory, waiting for another builder; a lock left by a dead process is taken over. */
async function lock(lockDir: string, log: ProvisionLog): Promise<() => void> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  let told = false;
  for (;;) {
    try {
      mkdirSync(lockDir);
      writeFileSync(join(lockDir, 'pid'), String(process.pid));
      return () => rmSync(lockDir, { recursive: true, force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let owner = NaN;
    try {
      owner = Number(readFileSync(join(lockDir, 'pid'), 'utf8'));
    } catch {
      // The owner made the directory but has not written its pid yet: wait.
    }
    if (Number.isInteger(owner) && owner > 0 && !pidAlive(owner)) {
      log.warn(`Taking over the Python venv lock left by process ${owner}, which is gone.`);
      rmSync(lockDir, { recursive: true, force: true });
      continue;
    }
    if (!told)
      log.info(
        `Waiting for another process (pid ${Number.isNaN(owner) ? '?' : owner}) building the Python venv ` +
          `${lockDir.replace(/\.lock$/, '')}…`,
      );
    told = true;
    if (Date.now() > deadline)
      throw new UserError(
        `Timed out waiting for the Python venv lock ${lockDir}; if no build is running, delete that directory`,
      );
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function run(
  cmd: string,
  args: string[],
  what: string,
  log: ProvisionLog,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const started = Date.now();
  let lastLine = '';
  const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const onOutput = (chunk: Buffer): void => {
    const lines = chunk.toString('utf8').trim().split('\n');
    lastLine = lines[lines.length - 1] ?? lastLine;
  };
  child.stdout.on('data', onOutput);
  child.stderr.on('data', onOutput);
  // A heartbeat so a person (or a CI log) sees the install is alive and what it is doing.
  const heartbeat = setInterval(
    () => log.info(`still ${what} (${Math.round((Date.now() - started) / 1000)}s)${lastLine ? `: ${lastLine}` : ''}`),
    15_000,
  );
  const code = await new Promise<number | null>((resolve) => {
    child.on('error', () => resolve(null));
    child.on('close', resolve);
  });
  clearInterval(heartbeat);
  if (code !== 0) throw new UserError(`${what} failed (exit ${code}): ${lastLine || 'no output'}`);
}

/**
 * The venv of `requirementsFile`, built on first use. Safe to call from several processes at once.
 */
export async function ensurePythonVenv(
  requirementsFile: string,
  log: ProvisionLog,
  env: NodeJS.ProcessEnv = process.env,
): Promise<PythonVenv> {
  const started = Date.now();
  const requirements = readFileSync(requirementsFile, 'utf8');
  const pin = firstPin(requirements, requirementsFile);
  const dir = pythonVenvDir(pin, env);
  const python = join(dir, 'bin', 'python');
  const base = basePython(env);
  const wanted = createHash('sha256').update(`python ${base.version}\n`).update(requirements).digest('hex');
  const ready = (): boolean =>
    existsSync(python) && existsSync(join(dir, MARKER)) && readFileSync(join(dir, MARKER), 'utf8').trim() === wanted;
  if (ready()) return { python, dir, built: false, ms: Date.now() - started };

  mkdirSync(toolCacheRoot(env), { recursive: true });
  const release = await lock(`${dir}.lock`, log);
  try {
    // Another process may have built it while this one waited for the lock.
    if (ready()) return { python, dir, built: false, ms: Date.now() - started };
    log.info(
      `Building the Python venv ${dir} (${pin.name} ${pin.version}, Python ${base.version}) for the crawler ` +
        `integrations' tests — first run on this machine, or its requirements changed; it takes a minute or two.`,
    );
    rmSync(dir, { recursive: true, force: true });
    await run(base.path, ['-m', 'venv', dir], 'creating the venv', log, env);
    const pipEnv = { ...env, PIP_DISABLE_PIP_VERSION_CHECK: '1', PYTHONDONTWRITEBYTECODE: '1' };
    await run(
      python,
      ['-m', 'pip', 'install', '--quiet', '--progress-bar', 'off', '-r', requirementsFile],
      `pip install -r ${requirementsFile}`,
      log,
      pipEnv,
    );
    writeFileSync(join(dir, MARKER), `${wanted}\n`);
    const ms = Date.now() - started;
    log.info(`Python venv ready in ${Math.round(ms / 1000)}s: ${python}`);
    return { python, dir, built: true, ms };
  } finally {
    release();
  }
}
