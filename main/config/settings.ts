import { existsSync, readFileSync } from 'node:fs';
import { DEFAULT_ENGINE_OPTIONS, DEFAULT_LOOKUP, DEFAULT_QUEUE_MS, MISSING_FOR_MS, type EngineOptions } from '../domain/engineOptions.ts';
import type { ProviderSettings } from '../providers/config.ts';
import type { StepChoice, StepKind } from '../domain/storyboard.ts';
import { parseStoryboard } from '../providers/storyboards.ts';
import { KINDS } from '../domain/tasks/model.ts';
import { CREDIT_PLANS, CREDIT_PRICE_WORDS, isCreditPlan, isCreditPrice } from '../pricing/creditPlans.ts';
import { settingsPath } from './paths.ts';
import { writePrivateFile } from './privateFile.ts';
import { checkTeamSettings, type TeamSettings } from './team.ts';

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
  /** The budget check holds a step at its forecast from past bills where that is above its estimate (pipeline/forecast.ts); off by default. */
  budgetUsesForecast: boolean;
  /** The desktop app looks for an update at start and hourly, downloads it in the background and installs it at quit; on by default. */
  updates: { checkAtStart: boolean };
  /** Prompts are written to the logs only when the person asks for them (or STUDIO_LOG_PROMPTS=1); see main/logging/redact.ts. */
  logging: { prompts: boolean };
}

export const DEFAULT_STEPS: Record<StepKind, StepChoice> = {
  image: { provider: 'simulator', model: 'sim-image-1' },
  clip: { provider: 'simulator', model: 'sim-clip-1' },
  speech: { provider: 'simulator', model: 'sim-speech-1' },
};

export class SettingsError extends Error {}

const HOUR = 3_600_000;

/**
 * A whole number within what the engine can use: a lease or interval past these bounds would stall the engine, and
 * one past 2^53 cannot even be written into a statement, so it is refused here with the field and its range.
 */
function whole(value: unknown, where: string, what: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new SettingsError(
      `settings: ${where} (${what}) must be a whole number from ${min} to ${max}, not ${JSON.stringify(value)}; set one in that range, or remove it for the default (${fallback})`,
    );
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
 * Changes settings.json: the change is checked as a whole before it is written, and written as a private file
 * (it may hold keys and the team database's password), so a refused or interrupted change leaves the file as it was.
 */
export function updateSettings(dataDir: string, change: (raw: Record<string, any>) => void): Settings {
  const raw = readRaw(dataDir);
  change(raw);
  const settings = parseSettings(raw);
  const path = settingsPath(dataDir);
  writePrivateFile(path, `${JSON.stringify(raw, null, 2)}\n`);
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
    concurrency[kind as keyof typeof concurrency] = whole(n, `engine.concurrency.${kind}`, `how many ${kind} tasks this machine runs at once`, d.concurrency[kind as keyof typeof concurrency], 0, 32);
  }
  const engine: EngineOptions = {
    leaseMs: whole(e.leaseMs, 'engine.leaseMs', 'how long a claim on a task holds without renewal, in ms', d.leaseMs, 300, HOUR),
    tickMs: whole(e.tickMs, 'engine.tickMs', 'how often the engine looks for work, in ms', d.tickMs, 10, 60_000),
    concurrency,
    poll: {
      intervalMs: whole(e.poll?.intervalMs, 'engine.poll.intervalMs', 'the first wait between asking for a result, in ms', d.poll.intervalMs, 10, HOUR),
      maxIntervalMs: whole(e.poll?.maxIntervalMs, 'engine.poll.maxIntervalMs', 'the longest wait between asking for a result, in ms', d.poll.maxIntervalMs, 10, HOUR),
      deadlineMs: whole(e.poll?.deadlineMs, 'engine.poll.deadlineMs', 'how long a result is waited for, in ms', d.poll.deadlineMs, 100, 7 * 24 * HOUR),
      missingForMs: whole(
        e.poll?.missingForMs,
        'engine.poll.missingForMs',
        'how long a result the provider said was complete must stay missing there before it is called expired, in ms',
        MISSING_FOR_MS,
        0,
        7 * 24 * HOUR,
      ),
    },
    lookup: {
      intervalMs: whole(e.lookup?.intervalMs, 'engine.lookup.intervalMs', 'the wait between lookups of an unknown outcome, in ms', DEFAULT_LOOKUP.intervalMs, 100, 24 * HOUR),
      tries: whole(e.lookup?.tries, 'engine.lookup.tries', 'how many lookups an unknown outcome gets', DEFAULT_LOOKUP.tries, 1, 1_000),
      queueMs: whole(e.lookup?.queueMs, 'engine.lookup.queueMs', 'how long a provider may queue a request before listing it, in ms', DEFAULT_QUEUE_MS, 0, 24 * HOUR),
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
    ui: { confirmAbove: ui.confirmAbove === undefined ? 5 : ui.confirmAbove, keepAwake: ui.keepAwake === true },
    prices: checkPrices(raw.prices ?? {}),
    team: checkTeamSettings(raw.team, (message) => new SettingsError(message)),
    budgetUsesForecast: readBudgetUsesForecast(raw.budgetUsesForecast),
    updates: { checkAtStart: readSwitch('updates', 'checkAtStart', raw.updates, true) },
    logging: { prompts: readSwitch('logging', 'prompts', raw.logging, false) },
  };
}

/** A settings group holding one true-or-false switch, like {"prompts": false}: a wrong value or another field is named. */
function readSwitch(group: string, field: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new SettingsError(`settings: ${group} must be an object like {"${field}": ${fallback}}`);
  const { [field]: on, ...rest } = value as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) throw new SettingsError(`settings: ${group} has no field "${extra}"; it takes only ${field}`);
  if (on !== undefined && typeof on !== 'boolean') throw new SettingsError(`settings: ${group}.${field} must be true or false, not ${JSON.stringify(on)}`);
  return on ?? fallback;
}

function readBudgetUsesForecast(value: unknown): boolean {
  if (value !== undefined && typeof value !== 'boolean') throw new SettingsError(`settings: budgetUsesForecast must be true or false, not ${JSON.stringify(value)}`);
  return value === true;
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
    if (p.adminKey !== undefined && (id !== 'fal' || typeof p.adminKey !== 'string' || !p.adminKey.trim())) {
      throw new SettingsError(`settings: providers.${id}.adminKey: only fal takes an admin key, as text (fal's ADMIN-scope key, to read its usage records); remove it otherwise`);
    }
    if (p.creditPrice !== undefined && !isCreditPrice(p.creditPrice)) {
      throw new SettingsError(`settings: providers.${id}.creditPrice must be your price of one credit, ${CREDIT_PRICE_WORDS}, not ${JSON.stringify(p.creditPrice)}; or remove it and set plan to your plan`);
    }
    if (p.plan !== undefined && !isCreditPlan(p.plan)) {
      throw new SettingsError(`settings: providers.${id}.plan must be one of ${CREDIT_PLANS.join(', ')}, not ${JSON.stringify(p.plan)}; or remove it and set creditPrice to your own price per credit`);
    }
    if (p.baseUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(String(p.baseUrl))) {
      throw new SettingsError(`settings: providers.${id}.baseUrl must be an http(s) address, not ${JSON.stringify(p.baseUrl)}`);
    }
  }
  return raw as Record<string, ProviderSettings>;
}
