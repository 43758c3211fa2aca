import { afterEach } from 'vitest';
import { openProviders, type Providers } from '../../main/providers/registry.ts';
import type { Faults } from '../../main/simulator/faults.ts';
import { startSimulator, type RunningSimulator } from '../../main/simulator/server.ts';
import { createSupervisor, openStudio, type Studio } from '../../main/studio.ts';
import { writeSettings } from './processes.ts';
import { tempDir } from './tmp.ts';

export interface SimulatedStudio {
  sim: RunningSimulator;
  dir: string;
  studio: Studio;
  providers: Providers;
  /** Runs the engine in this process until nothing is left that can move without a person. */
  work(): Promise<void>;
}

const opened: SimulatedStudio[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) {
    await s.providers.close();
    await s.studio.close();
    await s.sim.close();
  }
});

/** The engine in this process against the simulator over real HTTP, with real files and ffprobe. */
export async function simulatedStudio(options: { jobMs: number; faults?: Faults; settings: (simulatorUrl: string) => object }): Promise<SimulatedStudio> {
  const sim = await startSimulator({ jobMs: options.jobMs, faults: options.faults });
  const dir = tempDir();
  writeSettings(dir, options.settings(sim.url));
  const studio = await openStudio(dir);
  const providers = await openProviders(studio.settings, dir, {});
  const started = { sim, dir, studio, providers, work: () => createSupervisor(studio, providers.get).runUntilIdle() };
  opened.push(started);
  return started;
}
