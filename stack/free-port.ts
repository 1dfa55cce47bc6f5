import { createServer } from 'node:net';

/** Asks the OS for a free TCP port on loopback (tests run several servers side by side). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
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
 * A free port below 32768, outside Linux's ephemeral range (32768–60999): Temporal stores its services'
 * membership ports in a PostgreSQL smallint, so the OS's pick from `freePort()` does not fit there.
 */
export async function freeLowPort(taken: ReadonlySet<number> = new Set()): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (!taken.has(port) && !(await isPortInUse(port))) return port;
  }
  throw new Error('no free port found between 20000 and 32000');
}
