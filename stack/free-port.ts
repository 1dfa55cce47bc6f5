import { createServer } from 'node:net';

/**
 * A free TCP port on loopback for a server a test or the stack starts (several run side by side). Chosen below
 * Linux's ephemeral range (32768–60999) and checked free: a port the OS hands out for `listen(0)` comes from
 * that range, and between closing it and the server binding it any outgoing connection on the machine may take
 * it as its local port (a Temporal dev server then died with "bind: address already in use" on a busy run).
 * Below the range only another server picking the same random port can, and it checks too. At most 30999:
 * a Temporal dev server also listens 1000 above its port (HTTP), which stays below the range.
 */
export function freePort(): Promise<number> {
  return freeLowPort();
}

/** True when something already listens on host:port. */
export function isPortInUse(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(true));
    server.listen(port, host, () => server.close(() => resolve(false)));
  });
}

/**
 * A free port below 32768, outside Linux's ephemeral range (32768–60999): also what Temporal needs for its
 * services' membership ports, which it stores in a PostgreSQL smallint.
 */
export async function freeLowPort(taken: ReadonlySet<number> = new Set()): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 10_000 + Math.floor(Math.random() * 21_000);
    if (!taken.has(port) && !(await isPortInUse(port))) return port;
  }
  throw new Error('no free port found between 10000 and 31000');
}
