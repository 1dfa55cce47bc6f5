/**
 * Listening on loopback and closing for good: every server of the hostile world tracks its sockets so
 * close() never waits for a kept-alive connection or a slow answer (nothing left to keep jest alive).
 */
import type { AddressInfo, Server, Socket } from 'node:net';

export class SocketSet {
  readonly sockets = new Set<Socket>();

  track(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  /** Ends every tracked connection: `reset` sends a TCP RST (the peer sees ECONNRESET), else a plain destroy. */
  destroyAll(reset = false): void {
    for (const socket of this.sockets) {
      if (reset && !socket.destroyed) socket.resetAndDestroy();
      else socket.destroy();
    }
  }
}

/** Listens on 127.0.0.1 (port 0: any free port) and returns the port. */
export async function listenLoopback(server: Server, port = 0): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error): void => {
      server.off('listening', onListening);
      reject(err);
    };
    const onListening = (): void => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, '127.0.0.1');
  });
  return (server.address() as AddressInfo).port;
}

/** Stops listening and destroys every open connection; resolves when the server has closed. */
export async function closeServer(server: Server, sockets: SocketSet): Promise<void> {
  if (!server.listening) {
    sockets.destroyAll();
    return;
  }
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  sockets.destroyAll();
  await closed;
}
