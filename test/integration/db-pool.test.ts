/**
 * The server's connection pool (server/db/pool.ts) when PostgreSQL ends a connection: a process that
 * holds a client for a transaction must see a failed query, never crash on an 'error' event nobody hears.
 * (Seen in the fault suite: PostgreSQL stopped while the inbox drainer held a client between two queries.)
 */
import { createPool } from '../../server/db/pool';
import { env } from '../kit/services';

test('a checked-out client whose connection is ended fails its next query; the pool carries on', async () => {
  const pool = createPool(env('DATABASE_URL'), 2);
  const admin = createPool(env('DATABASE_URL'), 1);
  try {
    const client = await pool.connect();
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    // Ended from outside while the client is out of the pool and between queries, as a shutdown does.
    await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
    // The server's notice and the socket's end arrive while nobody queries: without a listener on the
    // client this is an uncaught 'error' event, which fails this file.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const lost = await client.query('SELECT 1').then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(lost).toBeInstanceOf(Error);
    client.release(lost as Error);
    // The pool dropped that client: the next query gets a new connection.
    expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  } finally {
    await pool.end();
    await admin.end();
  }
});
