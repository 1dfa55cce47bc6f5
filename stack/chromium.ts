/**
 * Finds a Chromium for PlaywrightCrawler tests and demos: `chromium` (or `chromium-browser`) on PATH, or,
 * when running as root on Debian, installs the distribution's package with apt-get (no browser download
 * from a CDN: the house rule is no binary downloads at install or run time beyond the system's packages).
 * Playwright launches it through `executablePath`; as root it needs `--no-sandbox`.
 */
import { execFileSync, spawnSync } from 'node:child_process';

const NAMES = ['chromium', 'chromium-browser'];

export interface ChromiumFound {
  executablePath: string;
  /** Milliseconds spent installing (0 when it was already there). */
  installMs: number;
  /** Launch arguments Playwright needs here. */
  args: string[];
}

function onPath(): string | undefined {
  for (const name of NAMES) {
    const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
    const path = found.stdout.trim();
    if (found.status === 0 && path !== '') return path;
  }
  return undefined;
}

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/** The Chromium to launch; installs it with apt-get when absent and allowed (`install`, root). */
export function ensureChromium(options: { install?: boolean } = {}): ChromiumFound {
  const args = isRoot() ? ['--no-sandbox'] : [];
  const present = onPath();
  if (present) return { executablePath: present, installMs: 0, args };
  if (options.install === false || !isRoot()) {
    throw new Error(
      'chromium: not found on PATH; install it (Debian: `sudo apt-get install -y chromium`) or run as root to ' +
        'let the tests install it',
    );
  }
  const started = Date.now();
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], { env, stdio: 'pipe' });
  } catch {
    // The package lists may be missing or stale: refresh them once, then try again.
    execFileSync('apt-get', ['update'], { env, stdio: 'pipe' });
    execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], { env, stdio: 'pipe' });
  }
  const installed = onPath();
  if (!installed) throw new Error('chromium: apt-get install chromium finished but no chromium is on PATH');
  return { executablePath: installed, installMs: Date.now() - started, args };
}
