/**
 * The provisioning order of Temporal's time-skipping test server. The `mvn` and `java` programs here are
 * small shell scripts standing in for the real ones (the real path is exercised by every run of the
 * `time-skipping` jest project, whose global setup provisions the server).
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { UserError } from '../../core/common/user-error';
import { ensureTemporalTestServer, testServerCacheDir, testServerExecutable } from '../../stack/temporal-test-server';
import { joinRegExp } from '../kit/regexp';

const quiet = { info: jest.fn(), warn: jest.fn() };

function script(dir: string, name: string, body: string): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

/** A PATH with only the shell tools the scripts use (the machine's own java and mvn left out on purpose). */
function sandbox(): { bin: string; root: string; cache: string; env: NodeJS.ProcessEnv } {
  const root = mkdtempSync(join(tmpdir(), 'th-test-server-'));
  const bin = join(root, 'bin');
  const tools = join(root, 'tools');
  mkdirSync(bin);
  mkdirSync(tools);
  for (const tool of ['sh', 'dirname', 'mkdir', 'cp', 'cat']) symlinkSync(join('/bin', tool), join(tools, tool));
  const env = { PATH: `${bin}:${tools}`, XDG_CACHE_HOME: join(root, 'cache'), HOME: root };
  return { bin, root, cache: testServerCacheDir(env), env };
}

/** A `java` that, like the real server without arguments, prints the usage (or records its arguments). */
function fakeJava(bin: string, log: string): void {
  script(
    bin,
    'java',
    `if [ "$1" = -version ]; then exit 0; fi\necho "$@" >> ${log}\necho "Usage: <command> <port> <flags>" >&2`,
  );
}

/** An `mvn` that keeps the pom it was given and "copies" one jar into -DoutputDirectory. */
function fakeMaven(bin: string, log: string): void {
  script(
    bin,
    'mvn',
    [
      'if [ "$1" = --version ]; then exit 0; fi',
      `echo "$@" >> ${log}`,
      'for a in "$@"; do case "$a" in -DoutputDirectory=*) out="${a#-DoutputDirectory=}";; esac; done',
      `prev=""; for a in "$@"; do if [ "$prev" = -f ]; then cp "$a" ${dirname(log)}/pom.xml; fi; prev="$a"; done`,
      'mkdir -p "$out" && echo jar > "$out/temporal-test-server-1.38.0.jar"',
      'echo "[INFO] BUILD SUCCESS"',
    ].join('\n'),
  );
}

beforeEach(() => jest.clearAllMocks());

test('the cache lives outside the clone, per machine and version', () => {
  expect(testServerCacheDir({ XDG_CACHE_HOME: '/x' })).toBe('/x/target-health/temporal-test-server-1.38.0');
});

test('TEMPORAL_TEST_SERVER_PATH wins, and must be executable', async () => {
  const { root, env } = sandbox();
  const explicit = script(join(root, 'elsewhere'), 'test-server', 'exit 0');
  await expect(ensureTemporalTestServer(quiet, { ...env, TEMPORAL_TEST_SERVER_PATH: explicit })).resolves.toEqual({
    kind: 'launcher',
    path: explicit,
    source: 'TEMPORAL_TEST_SERVER_PATH',
  });
  await expect(
    ensureTemporalTestServer(quiet, { ...env, TEMPORAL_TEST_SERVER_PATH: '/nonexistent/server' }),
  ).rejects.toThrow(/TEMPORAL_TEST_SERVER_PATH: "\/nonexistent\/server" is not an executable file/);
});

test(
  'with Java and Maven, it copies the pinned artifact from Maven Central into the cache, with a launcher, and ' +
    'reuses it',
  async () => {
    const { bin, root, cache, env } = sandbox();
    const mvnLog = join(root, 'logs', 'mvn.log');
    const javaLog = join(root, 'logs', 'java.log');
    mkdirSync(dirname(mvnLog));
    fakeMaven(bin, mvnLog);
    fakeJava(bin, javaLog);

    const server = await ensureTemporalTestServer(quiet, env);
    expect(server).toEqual({ kind: 'launcher', path: join(cache, 'temporal-test-server'), source: 'maven' });
    expect(testServerExecutable(server)).toEqual({ type: 'existing-path', path: join(cache, 'temporal-test-server') });
    expect(readdirSync(join(cache, 'lib'))).toEqual(['temporal-test-server-1.38.0.jar']);
    // Maven's working copy (its private local repository) is not kept; nothing is left beside the cache.
    expect(existsSync(join(cache, 'm2'))).toBe(false);
    expect(readdirSync(dirname(cache))).toEqual(['temporal-test-server-1.38.0']);
    expect(readFileSync(mvnLog, 'utf8')).toMatch(
      joinRegExp(
        /--batch-mode .*-Dmaven\.repo\.local=.*/,
        /org\.apache\.maven\.plugins:maven-dependency-plugin:3\.8\.1:copy-dependencies -DincludeScope=runtime/,
      ),
    );
    expect(readFileSync(join(root, 'logs', 'pom.xml'), 'utf8')).toContain(
      '<groupId>io.temporal</groupId><artifactId>temporal-test-server</artifactId><version>1.38.0</version>',
    );
    expect(quiet.info).toHaveBeenCalledWith(
      expect.stringMatching(/from Maven Central into .*first run on this machine only/),
    );

    // The launcher runs the server's main class from the copied jars, passing the SDK's arguments on.
    const { execFileSync } = await import('node:child_process');
    execFileSync(server.kind === 'launcher' ? server.path : '', ['51234'], { env, stdio: 'ignore' });
    expect(readFileSync(javaLog, 'utf8')).toContain(`-cp ${cache}/lib/* io.temporal.testserver.TestServer 51234`);

    // Second call: straight from the cache, no Maven.
    await expect(ensureTemporalTestServer(quiet, env)).resolves.toMatchObject({ source: 'cache' });
    expect(readFileSync(mvnLog, 'utf8').trim().split('\n')).toHaveLength(1);
  },
);

test('a failed Maven copy is a clear error and leaves no half-provisioned cache', async () => {
  const { bin, root, cache, env } = sandbox();
  fakeJava(bin, join(root, 'java.log'));
  script(
    bin,
    'mvn',
    'if [ "$1" = --version ]; then exit 0; fi\necho "[ERROR] Could not resolve dependencies: Connection ' +
      'refused" \nexit 1',
  );
  const failure = ensureTemporalTestServer(quiet, env);
  await expect(failure).rejects.toBeInstanceOf(UserError);
  await expect(failure).rejects.toThrow(
    joinRegExp(
      /copy-dependencies exited with 1: \[ERROR\] Could not resolve dependencies: /,
      /Connection refused; fix that, or point TEMPORAL_TEST_SERVER_PATH/,
    ),
  );
  expect(existsSync(cache)).toBe(false);
  expect(readdirSync(dirname(cache))).toEqual([]);
});

test('a copy that Java cannot start is refused, not cached', async () => {
  const { bin, root, cache, env } = sandbox();
  fakeMaven(bin, join(root, 'mvn.log'));
  script(
    bin,
    'java',
    'if [ "$1" = -version ]; then exit 0; fi\necho "Error: could not find or load main class ' +
      'io.temporal.testserver.TestServer" >&2\nexit 1',
  );
  await expect(ensureTemporalTestServer(quiet, env)).rejects.toThrow(
    /does not start with this Java \(Error: could not find or load main class/,
  );
  expect(existsSync(cache)).toBe(false);
});

test('without Java and Maven, it falls back to the SDK download with a warning', async () => {
  const { env } = sandbox();
  const server = await ensureTemporalTestServer(quiet, env);
  expect(server).toEqual({
    kind: 'sdk-download',
    downloadDir: join(env.XDG_CACHE_HOME!, 'target-health', 'temporal-test-server-sdk-download'),
  });
  expect(testServerExecutable(server)).toMatchObject({ type: 'cached-download' });
  expect(quiet.warn).toHaveBeenCalledWith(expect.stringMatching(/no Java and Maven .*SDK download \(needs internet\)/));
});
