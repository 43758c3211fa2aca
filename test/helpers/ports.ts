import { createServer } from 'node:net';

/** A port of 127.0.0.1 nothing listens on as this returns: one the system just gave out and took back. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
