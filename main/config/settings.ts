import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { DEFAULT_ENGINE_OPTIONS, type EngineOptions } from '../engine/supervisor.ts';
import { DEFAULT_LOOKUP } from '../engine/unknownLookups.ts';
import { DEFAULT_QUEUE_MS } from '../engine/listedBy.ts';
import type { CallTimeouts } from '../http/providerHttp.ts';
import { parseStoryboard, type StepChoice, type StepKind } from '../pipeline/storyboard.ts';
import { KINDS } from '../tasks/model.ts';
import { settingsPath } from './paths.ts';
import { checkTeamSettings, type TeamSettings } from './team.ts';

export interface ProviderSettings {
  /** Kept as typed here; the desktop app keeps keys encrypted and hands them over at start. */
  key?: string;
  baseUrl?: string;
  timeouts?: Partial<CallTimeouts>;
  /** ElevenLabs: what one credit costs on the person's plan, in USD; without it the catalogue's default is used. */
  creditPrice?: number;
}

export interface Settings {
  engine: EngineOptions;
  providers: Record<string, ProviderSettings>;
  media: { ffmpegPath?: string; ffprobePath?: string };
  /** The provider and model of each step kind when a storyboard does not say. */
  defaults: Record<StepKind, StepChoice>;
  /** Ask before a Generate above this amount; keep the machine awake while paid work is in flight. */
  ui: { confirmAbove: number | null; keepAwake: boolean };
  /** Prices the person set, in USD per request, for models with no documented price: "provider model" to amount. */
  prices: Record<string, number>;
  /** The team database this machine joins, and the name it goes by there (see team.ts). */
  team: TeamSettings;
}

export const DEFAULT_STEPS: Record<StepKind, StepChoice> = {
  image: { provider: 'simulator', model: 'sim-image-1' },
  clip: { provider: 'simulator', model: 'sim-clip-1' },
  speech: { provider: 'simulator', model: 'sim-speech-1' },
};

export class SettingsError extends Error {}

function positive(value: unknown, where: string, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new SettingsError(`settings: ${where} must be a whole number of at least ${min}, not ${JSON.stringify(value)}`);
  }
  return value;
}

function readRaw(dataDir: string): Record<string, any> {
  const path = settingsPath(dataDir);
  if (!existsSync(path)) return {};
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new SettingsError(`settings: ${path} is not valid JSON (${(err as Error).message}); fix or remove it`);
  }
}

/** Reads `<data>/settings.json`, every value optional; a wrong value is named, never silently replaced. */
export function loadSettings(dataDir: string): Settings {
  return parseSettings(readRaw(dataDir));
}

/**
 * Changes settings.json: the change is checked as a whole before it is written, and written to a temporary
 * file then renamed, so a refused or interrupted change leaves the file as it was.
 */
export function updateSettings(dataDir: string, change: (raw: Record<string, any>) => void): Settings {
  const raw = readRaw(dataDir);
  change(raw);
  const settings = parseSettings(raw);
  const path = settingsPath(dataDir);
  writeFileSync(`${path}.tmp`, `${JSON.stringify(raw, null, 2)}\n`, { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
  return settings;
}

export function parseSettings(raw: Record<string, any>): Settings {
  const e = raw.engine ?? {};
  const d = DEFAULT_ENGINE_OPTIONS;
  const concurrency = { ...d.concurrency };
  for (const [kind, n] of Object.entries(e.concurrency ?? {})) {
    if (!(KINDS as readonly string[]).includes(kind)) {
      throw new SettingsError(`settings: engine.concurrency has an unknown kind "${kind}"; the kinds are ${KINDS.join(', ')}`);
    }
    concurrency[kind as keyof typeof concurrency] = positive(n, `engine.concurrency.${kind}`, 0, 0);
  }
  const engine: EngineOptions = {
    leaseMs: positive(e.leaseMs, 'engine.leaseMs', d.leaseMs, 300),
    tickMs: positive(e.tickMs, 'engine.tickMs', d.tickMs, 10),
    concurrency,
    poll: {
      intervalMs: positive(e.poll?.intervalMs, 'engine.poll.intervalMs', d.poll.intervalMs, 10),
      maxIntervalMs: positive(e.poll?.maxIntervalMs, 'engine.poll.maxIntervalMs', d.poll.maxIntervalMs, 10),
      deadlineMs: positive(e.poll?.deadlineMs, 'engine.poll.deadlineMs', d.poll.deadlineMs, 100),
    },
    lookup: {
      intervalMs: positive(e.lookup?.intervalMs, 'engine.lookup.intervalMs', DEFAULT_LOOKUP.intervalMs, 100),
      tries: positive(e.lookup?.tries, 'engine.lookup.tries', DEFAULT_LOOKUP.tries, 1),
      queueMs: positive(e.lookup?.queueMs, 'engine.lookup.queueMs', DEFAULT_QUEUE_MS, 0),
    },
  };
  if (concurrency.render > 1) throw new SettingsError('settings: engine.concurrency.render must be 0 or 1: renders run one at a time');
  const media = raw.media ?? {};
  for (const key of ['ffmpegPath', 'ffprobePath']) {
    if (media[key] !== undefined && (typeof media[key] !== 'string' || !media[key])) throw new SettingsError(`settings: media.${key} must be the path of the program`);
  }
  let defaults = DEFAULT_STEPS;
  try {
    defaults = { ...DEFAULT_STEPS, ...parseStoryboard({ scenes: [{ imagePrompt: 'x' }], steps: raw.defaults ?? {} }).steps };
  } catch (err) {
    throw new SettingsError(`settings: defaults: ${(err as Error).message.replace(/^steps\.?/, '')}`);
  }
  const ui = raw.ui ?? {};
  if (ui.confirmAbove !== undefined && ui.confirmAbove !== null && !(typeof ui.confirmAbove === 'number' && ui.confirmAbove >= 0)) {
    throw new SettingsError('settings: ui.confirmAbove must be an amount of at least 0, or null');
  }
  return {
    engine,
    providers: checkProviders(raw.providers ?? {}),
    media,
    defaults,
    ui: { confirmAbove: ui.confirmAbove ?? 5, keepAwake: ui.keepAwake === true },
    prices: checkPrices(raw.prices ?? {}),
    team: checkTeamSettings(raw.team, (message) => new SettingsError(message)),
  };
}

function checkPrices(raw: unknown): Record<string, number> {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new SettingsError('settings: prices must be an object like {"fal fal-ai/flux/dev": 0.03}');
  for (const [model, price] of Object.entries(raw as Record<string, unknown>)) {
    const [provider, id] = model.split(' ');
    if (!provider || !id) throw new SettingsError(`settings: prices: "${model}" must name a provider and a model, like "fal fal-ai/flux/dev"`);
    if (typeof price !== 'number' || !Number.isFinite(price) || price < 0 || price > 1000) {
      throw new SettingsError(`settings: prices["${model}"] must be an amount in USD per request from 0 to 1000, not ${JSON.stringify(price)}`);
    }
  }
  return raw as Record<string, number>;
}

function checkProviders(raw: unknown): Record<string, ProviderSettings> {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new SettingsError('settings: providers must be an object');
  for (const [id, p] of Object.entries(raw as Record<string, any>)) {
    if (!p || typeof p !== 'object') throw new SettingsError(`settings: providers.${id} must be an object`);
    if (p.key !== undefined && (typeof p.key !== 'string' || !p.key)) throw new SettingsError(`settings: providers.${id}.key must be text`);
    if (p.creditPrice !== undefined && !(typeof p.creditPrice === 'number' && Number.isFinite(p.creditPrice) && p.creditPrice > 0)) {
      throw new SettingsError(`settings: providers.${id}.creditPrice must be the price of one credit in USD, above 0, not ${JSON.stringify(p.creditPrice)}`);
    }
    if (p.baseUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(String(p.baseUrl))) {
      throw new SettingsError(`settings: providers.${id}.baseUrl must be an http(s) address, not ${JSON.stringify(p.baseUrl)}`);
    }
  }
  return raw as Record<string, ProviderSettings>;
}
