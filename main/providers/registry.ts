import type { Settings } from '../config/settings.ts';
import { startSimulator, type RunningSimulator } from '../simulator/server.ts';
import type { Task } from '../tasks/model.ts';
import type { ProviderAdapter } from './port.ts';
import { SimulatorAdapter } from './simulatorAdapter.ts';

const FACTORIES: Record<string, (baseUrl: string) => ProviderAdapter> = {
  simulator: (baseUrl) => new SimulatorAdapter(baseUrl),
};

export const PROVIDER_IDS = Object.keys(FACTORIES);

export interface Providers {
  get(id: string): ProviderAdapter | undefined;
  close(): Promise<void>;
}

export function isProviderId(id: string): boolean {
  return id in FACTORIES;
}

/** Checks a task's input as its adapter will before sending, so bad input is refused at enqueue time. */
export function validateInput(provider: string, task: Pick<Task, 'kind' | 'model' | 'input'>): void {
  // prepare() never touches the network; the address is not used.
  FACTORIES[provider]!('http://127.0.0.1').prepare(task);
}

/**
 * The configured adapters. The simulator is the default provider: with no base URL set
 * (settings, or STUDIO_SIMULATOR_BASE_URL) it runs inside this process on loopback.
 */
export async function openProviders(settings: Settings, env: NodeJS.ProcessEnv = process.env): Promise<Providers> {
  let simulator: RunningSimulator | null = null;
  let simulatorUrl = settings.providers.simulator?.baseUrl ?? env.STUDIO_SIMULATOR_BASE_URL;
  if (!simulatorUrl) {
    simulator = await startSimulator();
    simulatorUrl = simulator.url;
  }
  const adapters = new Map<string, ProviderAdapter>([['simulator', FACTORIES.simulator!(simulatorUrl)]]);
  return {
    get: (id) => adapters.get(id),
    close: async () => {
      await simulator?.close();
    },
  };
}
