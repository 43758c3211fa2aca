import { join } from 'node:path';
import { startSimulator, type RunningSimulator } from '../simulator/server.ts';
import type { Kind, Task } from '../domain/tasks/model.ts';
import type { AdapterConfig, ProvidersSettings } from './config.ts';
import { ElevenLabsAdapter } from './elevenlabs.ts';
import { FalAdapter } from './fal.ts';
import { OpenAiAdapter } from './openai.ts';
import { OpenAiResponsesAdapter } from './openaiResponses.ts';
import { modelFor, type ModelSpec } from './models.ts';
import type { PreparedRequest, ProviderAdapter } from './port.ts';
import { ReplicateAdapter } from './replicate.ts';
import { SimulatorAdapter } from './simulatorAdapter.ts';

interface ProviderEntry {
  /** The name a person knows it by, in messages. */
  title: string;
  /** The declared model a task's model names, where a model id may carry more (Replicate's ":version"). */
  baseModel?: (model: string) => string;
  /** The variable the provider's own tools read the key from. */
  keyVariable: string | null;
  baseUrlVariable: string;
  /** Another provider whose key and address it uses: the same account reached through another of its APIs. */
  settingsOf?: string;
  create(config: AdapterConfig): ProviderAdapter;
}

const PROVIDERS: Record<string, ProviderEntry> = {
  simulator: { title: 'The simulator', keyVariable: null, baseUrlVariable: 'STUDIO_SIMULATOR_BASE_URL', create: (c) => new SimulatorAdapter(c.baseUrl!, c.timeouts) },
  fal: { title: 'fal', keyVariable: 'FAL_KEY', baseUrlVariable: 'STUDIO_FAL_BASE_URL', create: (c) => new FalAdapter(c) },
  replicate: { title: 'Replicate', baseModel: (m) => m.split(':')[0]!, keyVariable: 'REPLICATE_API_TOKEN', baseUrlVariable: 'STUDIO_REPLICATE_BASE_URL', create: (c) => new ReplicateAdapter(c) },
  openai: { title: 'OpenAI', keyVariable: 'OPENAI_API_KEY', baseUrlVariable: 'STUDIO_OPENAI_BASE_URL', create: (c) => new OpenAiAdapter(c) },
  'openai-responses': { title: 'OpenAI', keyVariable: 'OPENAI_API_KEY', baseUrlVariable: 'STUDIO_OPENAI_BASE_URL', settingsOf: 'openai', create: (c) => new OpenAiResponsesAdapter(c) },
  elevenlabs: { title: 'ElevenLabs', keyVariable: 'ELEVENLABS_API_KEY', baseUrlVariable: 'STUDIO_ELEVENLABS_BASE_URL', create: (c) => new ElevenLabsAdapter(c) },
};

export const PROVIDER_IDS = Object.keys(PROVIDERS);
/** The providers a person picks for a step and gives a key to: not one that only reaches another's account another way. */
export const STEP_PROVIDER_IDS = PROVIDER_IDS.filter((id) => !PROVIDERS[id]!.settingsOf);

export interface Providers {
  get(id: string): ProviderAdapter | undefined;
  /** Builds the adapters again, after a key or an address changed. */
  reload(settings: ProvidersSettings): Promise<void>;
  close(): Promise<void>;
}

/** Keys kept outside settings (the desktop app's encrypted store), which take precedence. */
export type KeyLookup = (provider: string) => string | undefined;

/** Own keys only: "__proto__" or "toString" are no provider. */
function entryOf(id: string): ProviderEntry | undefined {
  return Object.hasOwn(PROVIDERS, id) ? PROVIDERS[id] : undefined;
}

/** The name a person knows a provider by ("OpenAI", "fal"). */
export function titleOf(id: string): string {
  return entryOf(id)?.title ?? id;
}

export function isProviderId(id: string): boolean {
  return entryOf(id) !== undefined;
}

/** An adapter built only to read what it declares or to judge an input: it never sends, so needs no key. */
function shapeOf(provider: string): ProviderAdapter | undefined {
  return entryOf(provider)?.create({ key: 'unused', baseUrl: 'http://127.0.0.1' });
}

/** Checks a task's model and input as its adapter will before sending, so bad input is refused at enqueue time. */
export function validateInput(provider: string, task: Pick<Task, 'kind' | 'model' | 'input'>): void {
  shapeOf(provider)!.prepare(task);
}

/** A request built as its adapter would, for a provider with no key yet: enough to price it, never sent. */
export function prepareWithoutKey(provider: string, task: Pick<Task, 'kind' | 'model' | 'input'>): PreparedRequest {
  return shapeOf(provider)!.prepare(task);
}

/** The models a provider's adapter sends to. */
export function modelsOf(provider: string): readonly ModelSpec[] {
  return shapeOf(provider)?.capabilities.models ?? [];
}

/** Refuses a model the provider's adapter does not declare, naming the ones it does. */
export function checkModel(provider: string, kind: Kind, model: string): void {
  const entry = entryOf(provider)!;
  modelFor(entry.title, modelsOf(provider), kind, entry.baseModel?.(model) ?? model);
}

/** Whether a request id alone reaches a request at this provider (a capability, so no key is needed to ask). */
export function pollsById(provider: string): boolean {
  return shapeOf(provider)?.capabilities.pollById ?? false;
}

/** Where a provider's key comes from, without revealing it. */
export function keySource(id: string, settings: ProvidersSettings, env: NodeJS.ProcessEnv, keys?: KeyLookup): 'keychain' | 'settings' | 'environment' | null {
  const variable = entryOf(id)?.keyVariable;
  const own = entryOf(id)?.settingsOf ?? id;
  if (keys?.(own)) return 'keychain';
  if (settings.providers[own]?.key) return 'settings';
  return variable && env[variable] ? 'environment' : null;
}

/** The address a provider is reached at: its own in settings, else its variable's, else null (the provider's own). */
export function baseUrlOf(id: string, settings: ProvidersSettings, env: NodeJS.ProcessEnv = process.env): string | null {
  return settings.providers[id]?.baseUrl ?? env[PROVIDERS[id]!.baseUrlVariable] ?? null;
}

function configFor(id: string, settings: ProvidersSettings, env: NodeJS.ProcessEnv, keys?: KeyLookup): AdapterConfig {
  const entry = PROVIDERS[id]!;
  const from = entry.settingsOf ?? id;
  const own = settings.providers[from] ?? {};
  return {
    key: keys?.(from) ?? own.key ?? (entry.keyVariable ? env[entry.keyVariable] : undefined) ?? null,
    baseUrl: own.baseUrl ?? env[entry.baseUrlVariable] ?? null,
    timeouts: own.timeouts,
    creditPrice: own.creditPrice ?? null,
    plan: own.plan ?? null,
  };
}

/**
 * The configured adapters. The simulator is the default provider: with no base URL set it runs inside
 * this process on loopback, keeping its jobs in the data folder's job store, which every process on the
 * folder shares, so a job outlives a restart and is known to the others even after its process died.
 */
export async function openProviders(
  settings: ProvidersSettings,
  dataDir: string,
  env: NodeJS.ProcessEnv = process.env,
  keys?: KeyLookup,
): Promise<Providers> {
  let simulator: RunningSimulator | null = null;
  const adapters = new Map<string, ProviderAdapter>();
  const build = async (current: ProvidersSettings) => {
    for (const id of PROVIDER_IDS) {
      const config = configFor(id, current, env, keys);
      if (id === 'simulator' && !config.baseUrl) {
        simulator ??= await startSimulator({ stateDir: join(dataDir, 'simulator') });
        config.baseUrl = simulator.url;
      }
      adapters.set(id, PROVIDERS[id]!.create(config));
    }
  };
  await build(settings);
  return {
    get: (id) => adapters.get(id),
    reload: build,
    close: async () => {
      await simulator?.close();
    },
  };
}
