import { UserError } from '../../core/common/user-error';
import {
  loadDatabaseUrl,
  loadLocalStackSettings,
  loadLogLevel,
  loadMinuteDays,
  loadOptionalDatabaseUrl,
  loadTemporalSettings,
  loadWorkerTuning,
} from '../../server/config/env';

function message(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(UserError);
    expect((err as Error).message).not.toContain('\n');
    return (err as Error).message;
  }
  throw new Error('expected a UserError');
}

test('Temporal defaults target a local dev server without TLS', () => {
  expect(loadTemporalSettings({})).toEqual({
    address: 'localhost:7233',
    namespace: 'default',
    taskQueue: 'target-health',
  });
});

test('an API key turns TLS on (Temporal Cloud)', () => {
  const s = loadTemporalSettings({
    TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233',
    TEMPORAL_NAMESPACE: 'ns.acct',
    TEMPORAL_API_KEY: 'k',
  });
  expect(s.tls).toEqual({});
  expect(s.apiKey).toBe('k');
});

test('malformed values name the variable, the rule and what was given', () => {
  expect(message(() => loadTemporalSettings({ TEMPORAL_ADDRESS: 'localhost' }))).toBe(
    'TEMPORAL_ADDRESS: must be host:port, e.g. localhost:7233 or my-ns.tmprl.cloud:7233 (got "localhost")',
  );
  expect(message(() => loadTemporalSettings({ TEMPORAL_TLS: 'maybe' }))).toBe(
    'TEMPORAL_TLS: must be true or false (got "maybe")',
  );
  expect(message(() => loadLogLevel({ LOG_LEVEL: 'verbose' }))).toMatch(/^LOG_LEVEL: must be one of trace, debug/);
  expect(message(() => loadLocalStackSettings({ TEMPORAL_PORT: 'abc' }))).toMatch(
    /^TEMPORAL_PORT: must be a port number/,
  );
  expect(message(() => loadLocalStackSettings({ TARGET_HEALTH_PG_PORT: '70000' }))).toMatch(
    /^TARGET_HEALTH_PG_PORT: must be 1-65535/,
  );
});

test('an unreadable TLS file is named with its variable', () => {
  expect(message(() => loadTemporalSettings({ TEMPORAL_TLS_CA_PATH: '/nonexistent/ca.pem' }))).toMatch(
    /^TEMPORAL_TLS_CA_PATH: cannot read "\/nonexistent\/ca.pem" \(ENOENT\)/,
  );
});

test('DATABASE_URL: required for the worker, optional for the local stack, never echoes a password', () => {
  expect(message(() => loadDatabaseUrl({}))).toMatch(
    /^DATABASE_URL: is required: set it to postgres:\/\/.*\(it is not set\)$/,
  );
  expect(loadOptionalDatabaseUrl({})).toBeUndefined();
  expect(loadDatabaseUrl({ DATABASE_URL: 'postgresql://u:p@db:5432/x' })).toBe('postgresql://u:p@db:5432/x');
  const m = message(() => loadDatabaseUrl({ DATABASE_URL: 'mysql://u:hunter2@db/x' }));
  expect(m).toMatch(/^DATABASE_URL: must be a PostgreSQL URL/);
  expect(m).not.toContain('hunter2');
});

test('worker tuning: unset leaves the SDK defaults; given values are read; bad ones name the variable', () => {
  expect(loadWorkerTuning({})).toEqual({});
  expect(
    loadWorkerTuning({ TARGET_HEALTH_WORKER_CACHED_WORKFLOWS: '1500', TARGET_HEALTH_WORKER_STICKY_TIMEOUT_MS: '5000' }),
  ).toEqual({ maxCachedWorkflows: 1500, stickyQueueScheduleToStartTimeoutMs: 5000 });
  expect(message(() => loadWorkerTuning({ TARGET_HEALTH_WORKER_CACHED_WORKFLOWS: 'many' }))).toMatch(
    /^TARGET_HEALTH_WORKER_CACHED_WORKFLOWS: must be a number of workflows \(got "many"\)$/,
  );
  expect(message(() => loadWorkerTuning({ TARGET_HEALTH_WORKER_CACHED_WORKFLOWS: '2.5' }))).toMatch(
    /^TARGET_HEALTH_WORKER_CACHED_WORKFLOWS: must be a whole number/,
  );
  expect(message(() => loadWorkerTuning({ TARGET_HEALTH_WORKER_STICKY_TIMEOUT_MS: '10' }))).toMatch(
    /^TARGET_HEALTH_WORKER_STICKY_TIMEOUT_MS: must be at least 1000/,
  );
});

test(
  'TARGET_HEALTH_MINUTE_DAYS: 3 when unset or empty; a whole number of days 2-3650; a bad value names the ' +
    'variable',
  () => {
    expect(loadMinuteDays({})).toBe(3);
    expect(loadMinuteDays({ TARGET_HEALTH_MINUTE_DAYS: '' })).toBe(3);
    expect(loadMinuteDays({ TARGET_HEALTH_MINUTE_DAYS: '14' })).toBe(14);
    for (const bad of ['1', 'three', '2.5', '99999']) {
      expect(() => loadMinuteDays({ TARGET_HEALTH_MINUTE_DAYS: bad })).toThrow(UserError);
      expect(() => loadMinuteDays({ TARGET_HEALTH_MINUTE_DAYS: bad })).toThrow(/TARGET_HEALTH_MINUTE_DAYS/);
    }
  },
);
