import { launchHost, PortInUse } from '../../host/launch.ts';
import { openBrowser, shouldOpenBrowser } from '../../host/openBrowser.ts';
import { parse } from '../args.ts';
import { UsageError } from '../errors.ts';
import type { CliContext } from '../context.ts';

/** The studio in a browser: the engine and the loopback host, until SIGINT or SIGTERM. */
export async function serve(argv: string[], ctx: CliContext) {
  const { values } = parse(argv, { port: { type: 'string' }, 'no-open': { type: 'boolean' } });
  const port = Number(values.port ?? 0);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError('--port must be a port number (0 picks a free one)');
  const log = ctx.log.echoing(ctx.err, 'warn', 'studio: ');
  let host;
  try {
    // The terminal shows the host's warnings and errors, as before; everything goes to <data>/logs/serve.log.
    host = await launchHost(ctx.dataDir, { port, logger: log, database: ctx.database, media: ctx.media });
  } catch (err) {
    if (err instanceof PortInUse) throw new UsageError(err.message);
    throw err;
  }
  ctx.out(`Studio running. Open ${host.openUrl}`);
  if (!values['no-open'] && shouldOpenBrowser()) {
    ctx.out('Opening it in your browser…');
    openBrowser(host.openOnce(), (why) => log.warn(`the browser could not be opened (${why}); open the address above`));
  }
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await host.stop();
}
