import { onTestFinished } from 'vitest';
import { launchHost, type LaunchedHost } from '../../main/host/launch.ts';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../../main/simulator/server.ts';
import { falQueue, realMedia, type Ledger } from '../fakes/providers.ts';
import { startFake } from '../fakes/server.ts';
import { writeSettings } from './processes.ts';
import { tempDir } from './tmp.ts';

/**
 * Servers a test starts, stopped when it ends. The last started stops first, so a host stops before the
 * simulator its engine talks to.
 */

export async function simulatorForTest(options?: SimulatorOptions): Promise<RunningSimulator> {
  const sim = await startSimulator(options);
  onTestFinished(() => sim.close());
  return sim;
}

export async function hostForTest(...args: Parameters<typeof launchHost>): Promise<LaunchedHost> {
  const host = await launchHost(...args);
  onTestFinished(() => host.stop());
  return host;
}

/** A data folder whose CLI runs talk to a quick simulator of their own, stopped when the test ends. */
export async function simulatedFolderForTest(): Promise<{ sim: RunningSimulator; dir: string }> {
  const sim = await simulatorForTest({ jobMs: 20 });
  const dir = tempDir();
  writeSettings(dir, { engine: { tickMs: 20, poll: { intervalMs: 20, maxIntervalMs: 50 } }, providers: { simulator: { baseUrl: sim.url } } });
  return { sim, dir };
}

/**
 * A data folder whose steps go to a fal stand-in (real money, kept in `ledger`) or a simulator (made-up money), both
 * this test's and stopped when it ends.
 */
export async function falAndSimulatorFolderForTest(engine: object): Promise<{ sim: RunningSimulator; ledger: Ledger; dir: string }> {
  const sim = await simulatorForTest({ jobMs: 50 });
  const ledger: Ledger = { charged: [] };
  const fal = await startFake(falQueue(ledger, (await realMedia()).png));
  const dir = tempDir();
  writeSettings(dir, { engine, providers: { simulator: { baseUrl: sim.url }, fal: { baseUrl: fal.url, key: 'fal-key-0123456789' } } });
  return { sim, ledger, dir };
}
