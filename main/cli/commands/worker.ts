import { openProviders } from '../../providers/registry.ts';
import { createSupervisor, openStudio } from '../../studio.ts';
import { parse } from '../args.ts';
import { engineLog } from '../cliLog.ts';
import type { CliContext } from '../context.ts';

/** Runs the engine in this process; SIGINT/SIGTERM stop it cleanly, SIGKILL is what recovery is for. */
export async function worker(argv: string[], ctx: CliContext) {
  const { values } = parse(argv, { 'until-idle': { type: 'boolean' } });
  const studio = await openStudio(ctx.dataDir, undefined, { database: ctx.database, media: ctx.media });
  const providers = await openProviders(studio.settings, studio.dataDir);
  const { log, lines } = engineLog(ctx, studio, 'worker: ');
  const supervisor = createSupervisor(studio, providers.get, { log: lines.log });
  const stop = () => void supervisor.stop();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    log.info(`started as ${supervisor.owner.id}${studio.store.kind === 'postgres' ? ` on the team database at ${studio.store.where}` : ''}`);
    if (values['until-idle']) await supervisor.runUntilIdle();
    else {
      await supervisor.start();
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
    }
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    await supervisor.stop();
    await lines.settled();
    await providers.close();
    await studio.close();
  }
}
