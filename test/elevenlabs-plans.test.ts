import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { creditPlanView } from '../main/api/creditPlanSettings.ts';
import { checkSettingsPatch } from '../main/api/settingsPatch.ts';
import { parseSettings, SettingsError } from '../main/config/settings.ts';
import { estimateFromCatalogue } from '../main/pricing/catalogue.ts';
import { creditPriceOf } from '../main/pricing/creditPlans.ts';
import { taskCredits } from '../main/pricing/taskCredits.ts';
import { taskCost, withCredits } from '../main/cli/output.ts';
import { ElevenLabsAdapter } from '../main/providers/elevenlabs.ts';
import { openStudio } from '../main/studio.ts';
import { elevenLabs, realMedia, type Ledger } from './fakes/providers.ts';
import { startFake } from './fakes/server.ts';
import { serve } from './helpers/browser.ts';
import { runStudio, untilIdle, writeSettings } from './helpers/processes.ts';
import { storeKinds, type StoreKind } from './helpers/stores.ts';
import { tempDir } from './helpers/tmp.ts';

/**
 * ElevenLabs credits priced at the plan the person picked (resources/prices.json creditPlans), shown as credits beside
 * the money; `character-cost` counts credits, so Flash's half credit a character is not applied to it again.
 */

const KEY = 'el-0123456789abcdef';
const TEXT = 'The fox crossed the frozen river at dawn, looking back once at the hills. '.repeat(3).slice(0, 180);
const FLASH = 'eleven_flash_v2_5';

describe('the plan in settings', () => {
  it('a settings file with the older providers.elevenlabs.creditPrice still loads and means "my own price per credit"', () => {
    const s = parseSettings({ providers: { elevenlabs: { creditPrice: 0.00021 } } });
    expect(creditPlanView(s.providers.elevenlabs)).toMatchObject({ plan: 'own', ownPrice: 0.00021, defaultPlan: 'creator' });
    const own = creditPriceOf('elevenlabs', { creditPrice: s.providers.elevenlabs!.creditPrice, plan: null })!;
    expect(own).toMatchObject({ price: 0.00021, whose: 'your own' });
  });

  it('each plan has its price per credit, the one that never under-estimates; no plan set is the Creator plan\'s', () => {
    const prices = Object.fromEntries(['free', 'starter', 'creator', 'pro', 'scale', 'business'].map((plan) => [plan, creditPriceOf('elevenlabs', { plan: plan as never })!.price]));
    expect(prices).toEqual({ free: 0, starter: 0.0002, creator: 0.0003, pro: 0.00024, scale: 0.00018, business: 0.000165 });
    expect(creditPriceOf('elevenlabs', {})!).toMatchObject({ price: 0.0003, whose: "the Creator plan's", plan: 'creator' });
    expect(creditPriceOf('elevenlabs', {})!.source).toMatch(/^no plan set in settings, so the Creator plan's .*https:\/\/elevenlabs\.io\/pricing .*read 2026-12-02; pick your plan in settings$/);
  });

  it('a plan that is none of them is refused, saying which there are', () => {
    expect(() => parseSettings({ providers: { elevenlabs: { plan: 'gold' } } })).toThrow(SettingsError);
    expect(() => parseSettings({ providers: { elevenlabs: { plan: 'gold' } } })).toThrow('settings: providers.elevenlabs.plan must be one of free, starter, creator, pro, scale, business, not "gold"');
    expect(() => checkSettingsPatch({ elevenlabsPlan: { ownPrice: 0 } })).toThrow(/elevenlabsPlan\.ownPrice must be a number from 0\.000001 to 1/);
    expect(checkSettingsPatch({ elevenlabsPlan: { plan: 'pro' } })).toEqual({ elevenlabsPlan: { plan: 'pro' } });
  });

  it('the estimate names the credits beside the money: 180 characters on Flash are 90 credits at the Pro plan\'s price', () => {
    const e = estimateFromCatalogue('elevenlabs', FLASH, 'speech', { text: TEXT, voice_id: 'v' }, { plan: 'pro' })!;
    expect(e.cost).toBe(21_600);
    expect(e.credits).toEqual({ count: 90, words: "90 credits at the Pro plan's 0.00024 USD a credit" });
    // An odd number of characters on Flash is billed in whole credits: 181 characters, 91 credits.
    expect(estimateFromCatalogue('elevenlabs', FLASH, 'speech', { text: `${TEXT}!`, voice_id: 'v' }, { plan: 'pro' })!.credits!.count).toBe(91);
  });
});

describe('the plan saved through the API, and an own price per credit', () => {
  it('a change with both a plan and an own price is refused, and an own price below a micro-unit or above 1 USD a credit is refused: over a real host, nothing written', async () => {
    const dataDir = tempDir();
    writeSettings(dataDir, { providers: { elevenlabs: { plan: 'pro' } } });
    const { host, url } = await serve(dataDir, { ELEVENLABS_API_KEY: KEY, STUDIO_ELEVENLABS_BASE_URL: 'http://127.0.0.1:9' });
    const token = /token=([^&]+)/.exec(url)![1]!;
    const save = async (elevenlabsPlan: unknown) => {
      const res = await fetch(`${new URL(url).origin}/api/saveSettings`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify([{ elevenlabsPlan }]) });
      return { status: res.status, body: (await res.json()) as { error?: string } };
    };
    const written = () => JSON.parse(readFileSync(join(dataDir, 'settings.json'), 'utf8')).providers.elevenlabs;
    try {
      const both = await save({ plan: 'creator', ownPrice: 50 });
      expect(both.status).toBe(400);
      expect(both.body.error).toMatch(/^elevenlabsPlan takes either "plan" or "ownPrice", not both: send \{"plan": "creator"\} to use the plan's price, or \{"ownPrice": \.\.\.\} alone for your own/);
      for (const price of [1e-300, 0.0000009, 50]) {
        const own = await save({ ownPrice: price });
        expect(own.status).toBe(400);
        expect(own.body.error).toBe(`elevenlabsPlan.ownPrice must be a number from 0.000001 to 1 (USD per credit, such as 0.0003), not ${JSON.stringify(price)}`);
      }
      expect(written()).toEqual({ plan: 'pro' });
      // The bounds themselves are prices a person may set.
      expect((await save({ ownPrice: 0.000001 })).status).toBe(200);
      expect(written()).toEqual({ creditPrice: 0.000001 });
      expect((await save({ plan: 'scale' })).status).toBe(200);
      expect(written()).toEqual({ plan: 'scale' });
    } finally {
      host.child.kill('SIGTERM');
      await host.exited;
    }
  }, 60_000);

  it('a settings file whose providers.elevenlabs.creditPrice is below a micro-unit or above 1 USD is refused at start, saying what to write, and left as it is', async () => {
    for (const creditPrice of [1e-300, 2]) {
      const dataDir = tempDir();
      writeSettings(dataDir, { providers: { elevenlabs: { creditPrice } } });
      const before = readFileSync(join(dataDir, 'settings.json'), 'utf8');
      const run = await runStudio(dataDir, ['spend']);
      expect(run.code).not.toBe(0);
      expect(run.stderr).toContain(
        `settings: providers.elevenlabs.creditPrice must be your price of one credit, a number from 0.000001 to 1 (USD per credit, such as 0.0003), not ${JSON.stringify(creditPrice)}; or remove it and set plan to your plan`,
      );
      expect(readFileSync(join(dataDir, 'settings.json'), 'utf8')).toBe(before);
    }
    expect(parseSettings({ providers: { elevenlabs: { creditPrice: 1 } } }).providers.elevenlabs!.creditPrice).toBe(1);
  }, 60_000);
});

describe.each(storeKinds())('ElevenLabs billed in credits ($kind)', (kind: StoreKind) => {
  it('character-cost counts credits: a Flash request of 180 characters bills 90 credits at the plan set, kept as credits; the account\'s tier is checked', async () => {
    const ledger: Ledger = { charged: [] };
    const credits: number[] = [];
    const fake = await startFake(elevenLabs(ledger, (await realMedia()).speech, { credits, tier: 'creator' }));
    const dataDir = tempDir();
    const engine = { leaseMs: 3_000, tickMs: 50, concurrency: { image: 0, clip: 0, speech: 1, render: 0 } };
    writeSettings(dataDir, { engine, providers: { elevenlabs: { plan: 'pro' } } });
    const database = kind.kind === 'postgres' ? await kind.fresh() : undefined;
    const studio = await openStudio(dataDir, undefined, { database });
    const project = await studio.projects.ensure('Fox', Date.now());
    const { id } = await studio.tasks.enqueue({ projectId: project.id, kind: 'speech', provider: 'elevenlabs', model: FLASH, input: { text: TEXT, voice_id: 'voice-1' } }, Date.now());
    const team: Record<string, string> = database ? { STUDIO_DATABASE_URL: database, STUDIO_MACHINE_NAME: 'machine-a' } : {};
    expect(await untilIdle(dataDir, { ...team, ELEVENLABS_API_KEY: KEY, STUDIO_ELEVENLABS_BASE_URL: fake.url }, 40_000)).toBe(true);
    const task = (await studio.tasks.get(id))!;
    expect(credits).toEqual([90]);
    expect(task).toMatchObject({ status: 'SUCCEEDED', costEstimated: 21_600, costActual: 21_600, billedUnits: { count: 90, unit: 'credit' } });
    expect(task.costActualSource).toMatch(/^billed 90 credits at the Pro plan's 0\.00024 USD a credit \(the character-cost header\); the Pro plan set in settings/);
    expect(taskCredits(task)).toEqual({ count: 90, billed: true });
    expect(taskCredits({ ...task, billedUnits: null })).toEqual({ count: 90, billed: false });
    // `studio tasks` shows them beside the money.
    expect(withCredits(taskCost(task), task)).toBe('0.0216 USD (90 credits billed)');

    const adapter = new ElevenLabsAdapter({ key: KEY, baseUrl: fake.url, plan: 'pro' });
    const allowance = await adapter.allowance([adapter.prepare({ kind: 'speech', model: FLASH, input: { text: TEXT, voice_id: 'voice-1' } })]);
    expect(allowance.note).toBe("Your ElevenLabs account is on the Creator plan, but settings say Pro, so credits are priced at the Pro plan's 0.00024 USD a credit; pick Creator in Settings");
    const same = new ElevenLabsAdapter({ key: KEY, baseUrl: fake.url, plan: 'creator' });
    expect((await same.allowance([])).note).toBeUndefined();
    await studio.close();
  }, 60_000);
});
