/**
 * The PostgreSQL a backtest runs on when DATABASE_URL is not set: a private embedded server in a
 * temporary folder, removed when the backtest ends. Its scratch databases are created by the server's
 * own bootstrap superuser, so a backtest needs no `CREATEDB` right on any real database — the embedded
 * stack's product role (`target_health`) deliberately has none — and never shares a server with live
 * data.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from '../../stack/embedded-postgres';
import { freePort } from '../../stack/free-port';

export interface PrivateBacktestServer {
  /** A superuser URL on the private server: allowed to create and drop the scratch databases. */
  databaseUrl: string;
  /** Stops the server and removes its folder. */
  stop(): Promise<void>;
}

export async function startPrivateBacktestServer(): Promise<PrivateBacktestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'th-backtest-pg-'));
  // Run as root, the server runs as the `postgres` user, which must reach the data folder's parent.
  chmodSync(dir, 0o755);
  try {
    const pg = await startEmbeddedPostgres({ dataDir: join(dir, 'pg'), port: await freePort(), persistent: false });
    return {
      databaseUrl: pg.superuserUrl,
      stop: async () => {
        try {
          await pg.stop();
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      },
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** Runs `work` on DATABASE_URL's server when it is set, otherwise on a private server started for it. */
export async function withBacktestServer<T>(
  databaseUrl: string | undefined,
  work: (databaseUrl: string) => Promise<T>,
): Promise<T> {
  if (databaseUrl !== undefined) return work(databaseUrl);
  const server = await startPrivateBacktestServer();
  try {
    return await work(server.databaseUrl);
  } finally {
    await server.stop();
  }
}
