/**
 * The PostgreSQL sink's own rules (`@target-health/crawler/postgres`), without a server: which errors are
 * permanent, the pool it makes, the 'error' listener it attaches to a pool it is given, the inbox rows'
 * keys. Writing through it on a real server: test/integration/crawler-role.test.ts, ingest-cli.test.ts;
 * under a real outage: test/faults/recorder-outage.test.ts.
 */
import pg from 'pg';
import { inboxBatchId, isPermanentPostgresError, postgresSink } from '@target-health/crawler/postgres';
import { postgresSink as reExported } from '../../../server/compat/recorder';
import { captureLogger } from './helpers';
import { joinRegExp } from '../../kit/regexp';

const pgError = (code: string) => Object.assign(new Error('x'), { code });

test('data errors are permanent; connection, shutdown, timeout and conflict errors are retried', () => {
  for (const code of ['22003', '22P02', '23502', '54000']) expect(isPermanentPostgresError(pgError(code))).toBe(true);
  // 42501 (a grant missing) and 42P01 (the inbox not migrated yet) are retried: nothing is lost while someone fixes
  // them.
  for (const code of [
    'ECONNREFUSED',
    'ECONNRESET',
    '57P01',
    '57014',
    '53300',
    '40P01',
    '40001',
    '08006',
    '23505',
    '42P01',
    '42501',
  ])
    expect(isPermanentPostgresError(pgError(code))).toBe(false);
  expect(isPermanentPostgresError(new Error('Connection terminated unexpectedly'))).toBe(false);
  expect(isPermanentPostgresError(new TypeError("Cannot read properties of null (reading 'write')"))).toBe(false);
});

test('the server package re-exports the same sink (target-health/recorder, deprecated)', () => {
  expect(reExported).toBe(postgresSink);
});

test("an inbox row's key is its events' ids, in order: the same batch resent is the same row", () => {
  expect(inboxBatchId(['a', 'b'])).toBe(inboxBatchId(['a', 'b']));
  expect(inboxBatchId(['a', 'b'])).not.toBe(inboxBatchId(['b', 'a']));
  // Ids are joined with a separator no id holds (event ids are printable ASCII without spaces).
  expect(inboxBatchId(['ab', 'c'])).not.toBe(inboxBatchId(['a', 'bc']));
  expect(inboxBatchId(['a'])).toMatch(/^b1:[0-9a-f]{64}$/);
});

test(
  'from a connection string it makes its own pool, ' + 'with timeouts and keep-alive, and ends it on close()',
  async () => {
    const sink = postgresSink({
      connectionString: 'postgres://u:p@127.0.0.1:1/db',
      statementTimeoutMs: 5_000,
      logger: captureLogger().logger,
    });
    const options = (sink.pool as unknown as { options: Record<string, unknown> }).options;
    expect(options).toMatchObject({
      max: 4,
      connectionTimeoutMillis: 10_000,
      keepAlive: true,
      statement_timeout: 5_000,
      query_timeout: 7_000,
      idle_in_transaction_session_timeout: 10_000,
    });
    expect(sink.pool.listenerCount('error')).toBe(1);
    await sink.close();
    expect(sink.pool.ending).toBe(true);
  },
);

test(
  "a pool it is given gets one 'error' listener, and so does each of its connections (a connection lost in a " +
    "restart is logged, not a crash); the pool stays the crawler's",
  async () => {
    const pool = new pg.Pool({ connectionString: 'postgres://u:p@127.0.0.1:1/db' });
    const { logger, lines } = captureLogger();
    postgresSink(pool, { logger });
    const sink = postgresSink(pool, { logger });
    expect(pool.listenerCount('error')).toBe(1);
    // What pg-pool emits when an idle client's server goes away; without a listener this throws.
    expect(() =>
      pool.emit(
        'error',
        Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
      ),
    ).not.toThrow();
    expect(lines.map((l) => `${l.level} ${l.message}`)).toEqual([
      'warn recorder: a database connection was lost (57P01: terminating connection due to administrator ' +
        'command); writes reconnect and retry',
    ]);
    // A connection lent out has no pool listener (pg-pool takes it off): the sink guards each one it connects.
    const client = new pg.Client();
    pool.emit('connect', client);
    expect(client.listenerCount('error')).toBe(1);
    expect(() => client.emit('error', new Error('Connection terminated unexpectedly'))).not.toThrow();
    await sink.close();
    expect(pool.ending).toBe(false);
    await pool.end();
  },
);

test('bad configuration is refused with one line naming the field', () => {
  expect(() => postgresSink({ connectionString: undefined })).toThrow(
    joinRegExp(
      /^postgresSink: connectionString is empty; pass a PostgreSQL URL like /,
      /postgres:\/\/user:password@host:5432\/database \(is DATABASE_URL set\?\)$/,
    ),
  );
  expect(() => postgresSink({ connectionString: 'localhost:5432' })).toThrow(
    /^postgresSink: connectionString must be a PostgreSQL URL/,
  );
  expect(() => postgresSink({ connectionString: 'postgres://h/db', max: 0 })).toThrow(
    /^postgresSink: max: must be a whole number ≥ 1 \(got 0\)$/,
  );
  expect(() => postgresSink({ connectionString: 'postgres://h/db', maxRowBytes: 1.5 })).toThrow(
    /^postgresSink: maxRowBytes: must be a whole number ≥ 1 \(got 1.5\)$/,
  );
});
