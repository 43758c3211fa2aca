import { onTestFinished } from 'vitest';
import { launchHost, type LaunchedHost } from '../../main/host/launch.ts';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../../main/simulator/server.ts';

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
