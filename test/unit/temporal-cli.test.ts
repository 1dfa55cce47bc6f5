/**
 * The provisioning order of the Temporal CLI. The `temporal` and `go` programs here are small shell
 * scripts standing in for the real ones (the real path is exercised by every integration run).
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UserError } from '../../core/common/user-error';
import { ensureTemporalCli, temporalCacheDir } from '../../stack/temporal-cli';

const quiet = { info: jest.fn(), warn: jest.fn() };

function script(dir: string, name: string, body: string): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

function sandbox(): { bin: string; cache: string; env: NodeJS.ProcessEnv } {
  const root = mkdtempSync(join(tmpdir(), 'th-cli-'));
  const bin = join(root, 'bin');
  mkdirSync(bin);
  // /bin for sh itself; no temporal and no go there on purpose.
  const env = { PATH: `${bin}:/bin`, XDG_CACHE_HOME: join(root, 'cache'), HOME: root };
  return { bin, cache: temporalCacheDir(env), env };
}

beforeEach(() => jest.clearAllMocks());

test('the cache lives outside the clone, per machine and version', () => {
  expect(temporalCacheDir({ XDG_CACHE_HOME: '/x' })).toBe('/x/target-health/temporal-v1.5.1');
});

test('TEMPORAL_CLI_PATH wins, and must be executable', async () => {
  const { bin, env } = sandbox();
  const explicit = script(join(bin, '..', 'elsewhere'), 'temporal', 'exit 0');
  script(bin, 'temporal', 'exit 0');
  await expect(ensureTemporalCli(quiet, { ...env, TEMPORAL_CLI_PATH: explicit })).resolves.toEqual({
    kind: 'binary',
    path: explicit,
    source: 'TEMPORAL_CLI_PATH',
  });
  await expect(ensureTemporalCli(quiet, { ...env, TEMPORAL_CLI_PATH: '/nonexistent/temporal' })).rejects.toThrow(
    /TEMPORAL_CLI_PATH: "\/nonexistent\/temporal" is not an executable/,
  );
});

test('temporal on PATH comes before the cache', async () => {
  const { bin, cache, env } = sandbox();
  script(cache, 'temporal', 'exit 0');
  const onPath = script(bin, 'temporal', 'exit 0');
  await expect(ensureTemporalCli(quiet, env)).resolves.toEqual({ kind: 'binary', path: onPath, source: 'PATH' });
});

test('the cached binary is used when nothing is on PATH', async () => {
  const { cache, env } = sandbox();
  const cached = script(cache, 'temporal', 'exit 0');
  await expect(ensureTemporalCli(quiet, env)).resolves.toEqual({ kind: 'binary', path: cached, source: 'cache' });
});

test('with Go, it runs go install for v1.5.1 into the cache and says so', async () => {
  const { bin, cache, env } = sandbox();
  const log = join(bin, 'go.log');
  script(
    bin,
    'go',
    `echo "$@" >> ${log}\nif [ "$1" = install ]; then printf '#!/bin/sh\\n' > "$GOBIN/temporal"; chmod +x ` +
      `"$GOBIN/temporal"; fi\nexit 0`,
  );
  const result = await ensureTemporalCli(quiet, env);
  expect(result).toEqual({ kind: 'binary', path: join(cache, 'temporal'), source: 'go install' });
  expect(existsSync(join(cache, 'temporal'))).toBe(true);
  expect(readFileSync(log, 'utf8')).toContain('install github.com/temporalio/cli/cmd/temporal@v1.5.1');
  expect(quiet.info).toHaveBeenCalledWith(
    expect.stringMatching(/first run on this machine only; it takes a few minutes/),
  );
  // Second call: straight from the cache, no build.
  await expect(ensureTemporalCli(quiet, env)).resolves.toMatchObject({ source: 'cache' });
});

test('a failed go install is a clear error and leaves no half-written binary', async () => {
  const { bin, cache, env } = sandbox();
  script(bin, 'go', 'if [ "$1" = install ]; then echo "go: module lookup disabled" >&2; exit 1; fi\nexit 0');
  const failure = ensureTemporalCli(quiet, env);
  await expect(failure).rejects.toBeInstanceOf(UserError);
  await expect(failure).rejects.toThrow(
    /go install github.com\/temporalio\/cli\/cmd\/temporal@v1.5.1 failed \(exit 1\): go: module lookup disabled/,
  );
  expect(existsSync(join(cache, 'temporal'))).toBe(false);
});

test('without a binary or Go, it falls back to the SDK download with a warning', async () => {
  const { cache, env } = sandbox();
  await expect(ensureTemporalCli(quiet, env)).resolves.toEqual({ kind: 'sdk-download', downloadDir: cache });
  expect(quiet.warn).toHaveBeenCalledWith(expect.stringMatching(/SDK download \(needs internet\)/));
});
