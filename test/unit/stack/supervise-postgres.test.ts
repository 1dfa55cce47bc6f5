/**
 * The supervisor of `npm start`'s embedded PostgreSQL (stack/supervise-postgres.ts), with a stand-in for
 * the server's handle: an exit restarts it; a stop cancels a restart that is waiting, so nothing starts
 * the server again after the stack has stopped it (a Ctrl-C once made the stack restart it and stay up).
 */
import pino from 'pino';
import type { EmbeddedPostgresHandle } from '../../../stack/embedded-postgres';
import { supervisePostgres } from '../../../stack/supervise-postgres';

function fakeServer(): { handle: EmbeddedPostgresHandle; exit(how: string): void; restarts: () => number } {
  const listeners: Array<(how: string) => void> = [];
  let restarts = 0;
  const handle: EmbeddedPostgresHandle = {
    databaseUrl: 'postgres://target_health:x@127.0.0.1:1/target_health',
    superuserUrl: 'postgres://postgres:x@127.0.0.1:1/target_health',
    stop: () => Promise.resolve(),
    onUnexpectedExit: (l) => void listeners.push(l),
    restart: () => {
      restarts++;
      return Promise.resolve();
    },
  };
  return { handle, exit: (how) => listeners.forEach((l) => l(how)), restarts: () => restarts };
}

const logger = pino({ level: 'silent' });

/** Resolves once `done()` holds (each check a timer turn later). */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((r) => setTimeout(r, 5));
}

test('a stop cancels a pending restart, and later exits restart nothing', async () => {
  const stopped = fakeServer();
  const gaveUp: string[] = [];
  const supervision = supervisePostgres(stopped.handle, logger, (m) => void gaveUp.push(m), { firstDelayMs: 20 });
  // A control supervised the same way and not stopped: once it has restarted, the stopped one's wait is over too.
  const control = fakeServer();
  supervisePostgres(control.handle, logger, () => undefined, { firstDelayMs: 20 });
  stopped.exit('SIGINT');
  control.exit('SIGINT');
  supervision.stop();
  stopped.exit('SIGINT');
  await until(() => control.restarts() === 1);
  await new Promise((r) => setTimeout(r, 20));
  expect({ restarts: stopped.restarts(), gaveUp }).toEqual({ restarts: 0, gaveUp: [] });
});
