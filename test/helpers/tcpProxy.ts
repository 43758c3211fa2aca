import { createConnection, createServer, type Socket } from 'node:net';
import { FrontendMessages, ranMarker } from './pgMessages.ts';

/**
 * A TCP proxy on 127.0.0.1 between a process and a server (PostgreSQL), whose link can go silent: no byte is
 * forwarded either way and nothing is closed (no FIN, no RST), as when a network drops packets. What arrives
 * meanwhile, a close included, is held and delivered in order when the link heals, as TCP's retransmissions would.
 */
export interface Silenced {
  /**
   * The port the proxy's connection to the server for the client that tripped it comes from: the server names the
   * connection by it (PostgreSQL's pg_stat_activity.client_port). Bytes handed on may still wait to be read and
   * run there; the server says when it has.
   */
  serverPort: number;
}

export interface TcpProxy {
  port: number;
  /**
   * Goes silent once a client has sent `marker` and, after it, `through` (the end of the message that carries the
   * marker: a statement's parameters may leave before the message that runs it). Resolves when it has.
   */
  silentAfter(marker: string, through: Buffer): Promise<Silenced>;
  /**
   * Goes silent once a client has sent all a statement holding `marker` needs to run, whichever way it is sent (see
   * ranMarker): the server runs it, the client hears nothing back. Resolves when it has.
   */
  silentAfterRun(marker: string): Promise<Silenced>;
  /** Delivers what was held and forwards again. */
  heal(): void;
  close(): Promise<void>;
}

/** One direction of one connection: bytes (or its end) go through, or wait while the link is silent. */
class Direction {
  private readonly held: (Buffer | 'end')[] = [];

  constructor(private readonly to: Socket) {}

  pass(chunk: Buffer | 'end', silent: boolean): void {
    if (silent || this.held.length > 0) this.held.push(chunk);
    else this.deliver(chunk);
  }

  flush(): void {
    for (const chunk of this.held.splice(0)) this.deliver(chunk);
  }

  private deliver(chunk: Buffer | 'end'): void {
    if (this.to.destroyed) return;
    if (chunk === 'end') this.to.end();
    else this.to.write(chunk);
  }
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let silent = false;
  let trip: { marker: Buffer; through: Buffer; tripped: (silenced: Silenced) => void } | null = null;
  let run: { marker: Buffer; tripped: (silenced: Silenced) => void } | null = null;
  const directions: Direction[] = [];
  const sockets = new Set<Socket>();

  const server = createServer((client) => {
    const upstream = createConnection(target);
    const up = new Direction(upstream);
    const down = new Direction(client);
    directions.push(up, down);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      // A reset is what a silent link never shows: each side ends only as the other did.
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
    }
    let marked = false;
    const messages = new FrontendMessages();
    const armed = { parsed: false };
    client.on('data', (chunk: Buffer) => {
      up.pass(chunk, silent);
      const sent = messages.push(chunk);
      if (run && ranMarker(sent, run.marker, armed)) {
        silent = true;
        run.tripped({ serverPort: upstream.localPort! });
        run = null;
      }
      if (!trip) return;
      const at = marked ? 0 : chunk.indexOf(trip.marker);
      if (at < 0) return;
      marked = true;
      if (chunk.indexOf(trip.through, at) < 0) return;
      silent = true;
      trip.tripped({ serverPort: upstream.localPort! });
      trip = null;
    });
    upstream.on('data', (chunk: Buffer) => down.pass(chunk, silent));
    client.on('end', () => up.pass('end', silent));
    upstream.on('end', () => down.pass('end', silent));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy has no TCP port');

  return {
    port: address.port,
    silentAfter(marker, through) {
      return new Promise((tripped) => (trip = { marker: Buffer.from(marker), through, tripped }));
    },
    silentAfterRun(marker) {
      return new Promise((tripped) => (run = { marker: Buffer.from(marker), tripped }));
    },
    heal() {
      silent = false;
      for (const direction of directions) direction.flush();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
