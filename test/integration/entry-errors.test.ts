/**
 * Bad settings and unreachable servers, for both the worker and the CLI: one actionable line naming
 * the variable, a non-zero exit, and no stack trace.
 */
import { freePort } from '../../stack/free-port';
import { env } from '../kit/services';
import { CLI, cleanEnv, run, WORKER, type Finished } from '../kit/processes';

function expectOneLineError(result: Finished, mentions: RegExp): void {
  expect(result.code).not.toBe(0);
  expect(result.code).not.toBeNull();
  const lines = result.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(mentions);
  expect(result.stderr).not.toMatch(/\n\s+at /);
}

let closedPort: number;
beforeAll(async () => {
  closedPort = await freePort();
});

describe('worker', () => {
  test('unreachable Temporal', async () => {
    const r = await run(
      WORKER,
      [],
      cleanEnv({ TEMPORAL_ADDRESS: `127.0.0.1:${closedPort}`, DATABASE_URL: env('DATABASE_URL') }),
    );
    expectOneLineError(r, /^target-health worker: TEMPORAL_ADDRESS: cannot connect to Temporal at 127\.0\.0\.1:\d+/);
  });
  test('unreachable PostgreSQL', async () => {
    const r = await run(
      WORKER,
      [],
      cleanEnv({
        TEMPORAL_ADDRESS: env('TEMPORAL_ADDRESS'),
        DATABASE_URL: `postgres://u:secret@127.0.0.1:${closedPort}/db`,
      }),
    );
    expectOneLineError(r, /DATABASE_URL: cannot connect to PostgreSQL at 127\.0\.0\.1:\d+\/db .*ECONNREFUSED/);
    expect(r.stderr).not.toContain('secret');
  });
  test('missing DATABASE_URL', async () => {
    const r = await run(WORKER, [], cleanEnv({ TEMPORAL_ADDRESS: env('TEMPORAL_ADDRESS') }));
    expectOneLineError(r, /DATABASE_URL: is required.*\(it is not set\)/);
  });
  test('malformed TEMPORAL_ADDRESS', async () => {
    const r = await run(
      WORKER,
      [],
      cleanEnv({ TEMPORAL_ADDRESS: 'http://localhost', DATABASE_URL: env('DATABASE_URL') }),
    );
    expectOneLineError(r, /TEMPORAL_ADDRESS: must be host:port.*\(got "http:\/\/localhost"\)/);
  });
  test('malformed LOG_LEVEL', async () => {
    const r = await run(WORKER, [], cleanEnv({ LOG_LEVEL: 'loud', DATABASE_URL: env('DATABASE_URL') }));
    expectOneLineError(r, /LOG_LEVEL: must be one of trace, debug, info, warn, error, fatal, silent \(got "loud"\)/);
  });
  test('half an mTLS pair', async () => {
    const r = await run(
      WORKER,
      [],
      cleanEnv({ TEMPORAL_TLS_CERT_PATH: '/tmp/client.pem', DATABASE_URL: env('DATABASE_URL') }),
    );
    expectOneLineError(r, /TEMPORAL_TLS_KEY_PATH: mTLS needs both/);
  });
});

describe('CLI', () => {
  test('unreachable Temporal', async () => {
    const r = await run(CLI, ['status', 'shop.example.com'], cleanEnv({ TEMPORAL_ADDRESS: `127.0.0.1:${closedPort}` }));
    expectOneLineError(r, /^target-health: TEMPORAL_ADDRESS: cannot connect to Temporal at 127\.0\.0\.1:\d+/);
  });
  test('unreachable PostgreSQL', async () => {
    const r = await run(
      CLI,
      ['start', 'shop.example.com'],
      cleanEnv({
        TEMPORAL_ADDRESS: env('TEMPORAL_ADDRESS'),
        DATABASE_URL: `postgres://u:p@127.0.0.1:${closedPort}/db`,
      }),
    );
    expectOneLineError(r, /^target-health: DATABASE_URL: cannot connect to PostgreSQL/);
  });
  test('malformed DATABASE_URL', async () => {
    const r = await run(CLI, ['migrate'], cleanEnv({ DATABASE_URL: 'mysql://localhost/db' }));
    expectOneLineError(r, /DATABASE_URL: must be a PostgreSQL URL like postgres:\/\//);
  });
  test('malformed TEMPORAL_NAMESPACE', async () => {
    const r = await run(CLI, ['status', 'shop.example.com'], cleanEnv({ TEMPORAL_NAMESPACE: 'bad namespace' }));
    expectOneLineError(r, /TEMPORAL_NAMESPACE: must be a namespace name/);
  });
  test('invalid site and duration arguments', async () => {
    expectOneLineError(
      await run(CLI, ['start', 'not a host'], cleanEnv({})),
      /site: must be a host name like shop\.example\.com/,
    );
    expectOneLineError(
      await run(CLI, ['start', 'shop.example.com', '--tick', 'soon'], cleanEnv({})),
      /--tick: "soon" is not a duration/,
    );
  });
});
