import { ownPicturePath, receiveMusic, receivePicture, sweepUploads } from '../api/ownUpload.ts';
import type { Logger } from '../logging/logger.ts';
import { openRuntime } from '../runtime.ts';
import { readHostIdentity, writeHostIdentity } from './identity.ts';
import { startHost, type RunningHost } from './server.ts';

/** The port asked for is taken: nothing was started and nothing was sent. */
export class PortInUse extends Error {}

export interface LaunchedHost extends RunningHost {
  stop(): Promise<void>;
}

/**
 * The engine and the loopback host in this process, on one data folder: `studio serve`. The port is bound
 * before the engine starts, so a port that is taken sends nothing.
 *
 * The token and the port are kept in the data folder (identity.ts): a restart on the same folder uses the
 * same token, and asks for the port it had, so a tab left open finds it again at the same address. When
 * that port has been taken meanwhile, it takes a free one, and the tab needs the new printed address.
 */
export async function launchHost(
  dataDir: string,
  options: { port?: number; log?: (m: string) => void; logger?: Logger; database?: string; media?: string } = {},
): Promise<LaunchedHost> {
  const runtime = await openRuntime(dataDir, { mediaUrl: (id) => `/media/${id}`, log: options.log, logger: options.logger, database: options.database, media: options.media });
  // The host's lines are warnings in the log (a terminal shows them, as it did before there was a log).
  const log = options.log ?? (options.logger && ((m: string) => options.logger!.warn(m)));
  const identity = readHostIdentity(dataDir);
  await sweepUploads(runtime.studio);
  const start = (port: number) =>
    startHost(runtime.service, {
      port,
      changes: () => runtime.studio.store.watch(),
      token: identity.token,
      log,
      output: (id, index) => runtime.studio.files.file(id, index, `task ${id}'s result`),
      own: {
        receive: (project, scene, name, body, announced) => receivePicture(runtime.studio, project, scene, name, body, announced),
        receiveMusic: (project, name, body, announced) => receiveMusic(runtime.studio, project, name, body, announced),
        path: (project, sha256) => ownPicturePath(runtime.studio, project, sha256),
      },
    });
  let host: RunningHost;
  try {
    // A port asked for is that port or nothing; otherwise the last one, else any free one.
    const last = options.port ? null : identity.port;
    host = last
      ? await start(last).catch((err: Error) => {
          log?.(`port ${last}, used last time, is not free (${err.message}); taking another, so a tab left open needs the new address`);
          return start(0);
        })
      : await start(options.port ?? 0);
  } catch (err) {
    await runtime.stop();
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new PortInUse(`port ${options.port} is in use; pick another with --port`);
    throw err;
  }
  try {
    writeHostIdentity(dataDir, { token: host.token, port: host.port });
  } catch (err) {
    log?.(`the address could not be kept for the next start (${(err as Error).message}); a tab left open will need the new address then`);
  }
  options.logger?.info(`serving ${host.url} on the data folder ${dataDir}`);
  await runtime.startEngine();
  return {
    ...host,
    stop: async () => {
      await host.close();
      await runtime.stop();
    },
  };
}
