/**
 * Finds or provisions Temporal's time-skipping test server, the one `TestWorkflowEnvironment
 * .createTimeSkipping` runs. It is Java code from the Java SDK, published on Maven Central as
 * `io.temporal:temporal-test-server`; the SDK's own download of its native build needs internet beyond
 * the package registries, Maven Central does not. One place, used by the time-skipping tests and CI,
 * in this order:
 *   1. TEMPORAL_TEST_SERVER_PATH, when set (an executable taking `<port>`, like the SDK's download);
 *   2. the per-machine cache outside the clone
 *      (~/.cache/target-health/temporal-test-server-1.38.0/temporal-test-server, a launcher script);
 *   3. with Java and Maven present: the artifact and its dependencies copied from Maven Central into
 *      that cache (`mvn dependency:copy-dependencies`), plus the launcher;
 *   4. otherwise the Temporal SDK's own download of the test server (needs internet).
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { EphemeralServerExecutable } from '@temporalio/testing';
import { UserError } from '../core/common/user-error';
import { type ProvisionLog, isExecutable, toolCacheRoot } from './temporal-cli';

export const TEMPORAL_TEST_SERVER_VERSION = '1.38.0';
export const TEMPORAL_TEST_SERVER_ARTIFACT = 'io.temporal:temporal-test-server';
/** Pinned so the copy does not depend on the Maven installation's default plugin version. */
const DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1';
/** The test server logs through SLF4J 1.7 (its slf4j-api); without a binding it warns on every start. */
const SLF4J_NOP = { groupId: 'org.slf4j', artifactId: 'slf4j-nop', version: '1.7.36' };
const LAUNCHER = 'temporal-test-server';

export type TemporalTestServer =
  | { kind: 'launcher'; path: string; source: 'TEMPORAL_TEST_SERVER_PATH' | 'cache' | 'maven' }
  | { kind: 'sdk-download'; downloadDir: string };

export function testServerCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(toolCacheRoot(env), `temporal-test-server-${TEMPORAL_TEST_SERVER_VERSION}`);
}

/** What `TestWorkflowEnvironment.createTimeSkipping({ server: { executable } })` takes. */
export function testServerExecutable(server: TemporalTestServer): EphemeralServerExecutable {
  return server.kind === 'launcher'
    ? { type: 'existing-path', path: server.path }
    : { type: 'cached-download', downloadDir: server.downloadDir };
}

function runs(command: string, args: string[], env: NodeJS.ProcessEnv): boolean {
  return spawnSync(command, args, { env, stdio: 'ignore' }).status === 0;
}

function pom(): string {
  const [groupId, artifactId] = TEMPORAL_TEST_SERVER_ARTIFACT.split(':');
  const dependency = (g: string, a: string, v: string): string =>
    `    <dependency><groupId>${g}</groupId><artifactId>${a}</artifactId><version>${v}</version></dependency>`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!-- Written by target-health (stack/temporal-test-server.ts) only to copy the test server and its ' +
      'dependencies. -->',
    '<project xmlns="http://maven.apache.org/POM/4.0.0">',
    '  <modelVersion>4.0.0</modelVersion>',
    '  <groupId>local.target-health</groupId>',
    '  <artifactId>temporal-test-server-provisioning</artifactId>',
    '  <version>1</version>',
    '  <packaging>pom</packaging>',
    '  <dependencies>',
    dependency(groupId!, artifactId!, TEMPORAL_TEST_SERVER_VERSION),
    dependency(SLF4J_NOP.groupId, SLF4J_NOP.artifactId, SLF4J_NOP.version),
    '  </dependencies>',
    '</project>',
    '',
  ].join('\n');
}

function launcherScript(): string {
  return [
    '#!/bin/sh',
    `# Temporal's time-skipping test server ${TEMPORAL_TEST_SERVER_VERSION} (${TEMPORAL_TEST_SERVER_ARTIFACT} ` +
      `from Maven Central),`,
    '# provisioned by target-health (stack/temporal-test-server.ts). Arguments as the SDK passes them:',
    '#   temporal-test-server <port> [--enable-time-skipping]',
    '# `exec`: the SDK stops the server by killing this process, so it must be the JVM itself.',
    '# The SDK waits only 5 s for the port: the serial collector and the C1 compiler alone start the JVM',
    '# quickest on a small machine, and a test server never runs long enough to profit from C2.',
    'DIR=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)',
    'exec "${JAVA_HOME:+$JAVA_HOME/bin/}java" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$DIR/lib/*" ' +
      'io.temporal.testserver.TestServer "$@"',
    '',
  ].join('\n');
}

/**
 * Copies the artifact and its dependencies from Maven Central into a staging folder, then moves it into the cache in
 * one rename.
 */
async function mavenInstall(cacheDir: string, log: ProvisionLog, env: NodeJS.ProcessEnv): Promise<string> {
  mkdirSync(dirname(cacheDir), { recursive: true });
  const staging = mkdtempSync(join(dirname(cacheDir), `.staging-test-server-${process.pid}-`));
  chmodSync(staging, 0o755);
  writeFileSync(join(staging, 'pom.xml'), pom());
  log.info(
    `Copying Temporal's time-skipping test server ${TEMPORAL_TEST_SERVER_VERSION} ` +
      `(${TEMPORAL_TEST_SERVER_ARTIFACT}) from Maven Central into ${cacheDir} — first run on this machine only; ` +
      `it takes under a minute.`,
  );
  const started = Date.now();
  let lastLine = '';
  const child = spawn(
    'mvn',
    [
      '--batch-mode',
      '-f',
      join(staging, 'pom.xml'),
      // A private local repository: nothing is left in ~/.m2, and the cache folder holds all it needs.
      `-Dmaven.repo.local=${join(staging, 'm2')}`,
      `${DEPENDENCY_PLUGIN}:copy-dependencies`,
      '-DincludeScope=runtime',
      `-DoutputDirectory=${join(staging, 'lib')}`,
    ],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const onOutput = (chunk: Buffer): void => {
    const lines = chunk
      .toString('utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '');
    lastLine = lines[lines.length - 1] ?? lastLine;
  };
  child.stdout.on('data', onOutput);
  child.stderr.on('data', onOutput);
  // A heartbeat so a person (or a CI log) can see the copy is alive and what it is doing.
  const heartbeat = setInterval(() => {
    const secs = Math.round((Date.now() - started) / 1000);
    log.info(`still copying the test server (${secs}s)${lastLine ? `: ${lastLine.slice(0, 160)}` : ''}`);
  }, 10_000);
  const code = await new Promise<number | null>((resolve) => {
    child.on('error', () => resolve(null));
    child.on('close', resolve);
  });
  clearInterval(heartbeat);
  const fail = (what: string): never => {
    rmSync(staging, { recursive: true, force: true });
    throw new UserError(
      `provisioning the Temporal test server failed: ${what}; fix that, or point TEMPORAL_TEST_SERVER_PATH at ` +
        `a test server executable`,
    );
  };
  if (code !== 0) fail(`mvn ${DEPENDENCY_PLUGIN}:copy-dependencies exited with ${code}: ${lastLine || 'no output'}`);
  rmSync(join(staging, 'm2'), { recursive: true, force: true });
  const launcher = join(staging, LAUNCHER);
  writeFileSync(launcher, launcherScript());
  chmodSync(launcher, 0o755);
  // Without arguments the server prints its usage and exits: proof that Java loads it from the copy.
  const probe = spawnSync(launcher, [], { env, encoding: 'utf8', timeout: 60_000 });
  if (!`${probe.stderr ?? ''}${probe.stdout ?? ''}`.includes('Usage:')) {
    fail(
      `the copied server does not start with this Java ` +
        `(${(probe.stderr ?? '').trim().split('\n')[0] || `exit ${probe.status}`})`,
    );
  }
  try {
    renameSync(staging, cacheDir);
  } catch (err) {
    // Another process on this machine provisioned it at the same time: keep theirs.
    rmSync(staging, { recursive: true, force: true });
    if (!isExecutable(join(cacheDir, LAUNCHER))) throw err;
  }
  const target = join(cacheDir, LAUNCHER);
  log.info(
    `Temporal test server ${TEMPORAL_TEST_SERVER_VERSION} provisioned in ` +
      `${Math.round((Date.now() - started) / 1000)}s: ${target}`,
  );
  return target;
}

export async function ensureTemporalTestServer(
  log: ProvisionLog,
  env: NodeJS.ProcessEnv = process.env,
): Promise<TemporalTestServer> {
  const explicit = env.TEMPORAL_TEST_SERVER_PATH;
  if (explicit !== undefined && explicit !== '') {
    if (!isExecutable(explicit)) {
      throw new UserError(
        `TEMPORAL_TEST_SERVER_PATH: "${explicit}" is not an executable file; point it at a Temporal test ` +
          `server executable or unset it`,
      );
    }
    return { kind: 'launcher', path: explicit, source: 'TEMPORAL_TEST_SERVER_PATH' };
  }
  const cacheDir = testServerCacheDir(env);
  const cached = join(cacheDir, LAUNCHER);
  if (isExecutable(cached)) return { kind: 'launcher', path: cached, source: 'cache' };

  if (runs('java', ['-version'], env) && runs('mvn', ['--version'], env)) {
    return { kind: 'launcher', path: await mavenInstall(cacheDir, log, env), source: 'maven' };
  }

  log.warn(
    'No Temporal test server in the cache, and no Java and Maven to copy one from Maven Central: falling back ' +
      'to the Temporal SDK download (needs internet).',
  );
  // Beside the Maven copy's folder, not in it: a later copy moves its folder into place in one rename.
  const downloadDir = join(toolCacheRoot(env), 'temporal-test-server-sdk-download');
  if (!existsSync(downloadDir)) mkdirSync(downloadDir, { recursive: true });
  return { kind: 'sdk-download', downloadDir };
}
