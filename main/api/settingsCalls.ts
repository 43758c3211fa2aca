/** The StudioApi's settings, team mode, engine status and model catalogue: what this machine runs with. */

import { updateSettings } from '../config/settings.ts';
import { isProviderId, STEP_PROVIDER_IDS } from '../providers/registry.ts';
import { checkSettingsPatch } from './settingsPatch.ts';
import { applyCreditPlan, creditPlanView } from './creditPlanSettings.ts';
import { checkTeamChange, saveTeam as saveTeamSettings, teamView } from './teamSettings.ts';
import { modelCatalogue } from './models.ts';
import { ApiError, refusals } from './apiErrors.ts';
import { FAL_ADMIN_KEY_NAME, type ServiceContext } from './serviceContext.ts';
import { iso } from './taskView.ts';
import type { EngineStatus, ModelCatalogueView, SettingsPatch, SettingsView, TeamChange } from './contract.ts';

export async function listModels(ctx: ServiceContext): Promise<ModelCatalogueView> {
  return modelCatalogue({
    get: (id) => ctx.deps.providers.get(id),
    keySource: (id) => ctx.deps.keys.source(id),
    own: ctx.studio.settings.prices,
    defaults: ctx.studio.settings.defaults,
  });
}

export async function engineStatus(ctx: ServiceContext): Promise<EngineStatus> {
  const paused = ctx.deps.paused();
  return { paused: paused && { reason: paused.reason, since: iso(paused.since)! } };
}

export async function getSettings(ctx: ServiceContext): Promise<SettingsView> {
  const s = ctx.studio.settings;
  return {
    concurrency: s.engine.concurrency,
    leaseMs: s.engine.leaseMs,
    pollDeadlineMs: s.engine.poll.deadlineMs,
    ffmpegPath: s.media.ffmpegPath ?? null,
    keys: Object.fromEntries(STEP_PROVIDER_IDS.filter((id) => id !== 'simulator').map((id) => [id, ctx.deps.keys.source(id)])),
    keysEncrypted: ctx.deps.keys.encrypted,
    falAdminKey: Boolean(ctx.deps.keys.secret(FAL_ADMIN_KEY_NAME)),
    confirmAbove: s.ui.confirmAbove,
    keepAwake: s.ui.keepAwake,
    budgetUsesForecast: s.budgetUsesForecast,
    checkUpdatesAtStart: s.updates.checkAtStart,
    team: teamView(ctx.studio),
    elevenlabsPlan: creditPlanView(s.providers.elevenlabs),
  };
}

/** Saves the team database and the machine name; the studio uses them from its next start. */
export async function saveTeam(ctx: ServiceContext, change: TeamChange): Promise<SettingsView> {
  return refusals(async () => {
    saveTeamSettings(ctx.studio, checkTeamChange(change));
    return getSettings(ctx);
  });
}

/** Saves settings; engine values take effect at the next start, a key at once. */
export async function saveSettings(ctx: ServiceContext, patch: SettingsPatch): Promise<SettingsView> {
  return refusals(async () => {
    // The program the studio runs is the person's choice on this machine (the settings file, the CLI, the
    // desktop app's own file dialog), never something a page or the loopback host can set.
    if (patch && typeof patch === 'object' && ('ffmpegPath' in patch || 'ffprobePath' in patch)) {
      throw new ApiError('the ffmpeg program is chosen in settings.json (media.ffmpegPath) on this machine, not through the studio\'s API');
    }
    checkSettingsPatch(patch);
    if (patch.key) {
      if (!isProviderId(patch.key.provider) || patch.key.provider === 'simulator') throw new ApiError(`there is no provider "${patch.key.provider}" that takes a key`);
      await ctx.deps.keys.set(patch.key.provider, patch.key.value);
    }
    if (patch.falAdminKey !== undefined) await ctx.deps.keys.set(FAL_ADMIN_KEY_NAME, patch.falAdminKey);
    ctx.studio.settings = updateSettings(ctx.studio.dataDir, (raw) => {
      raw.engine ??= {};
      if (patch.concurrency) raw.engine.concurrency = { ...raw.engine.concurrency, ...patch.concurrency };
      if (patch.leaseMs !== undefined) raw.engine.leaseMs = patch.leaseMs;
      if (patch.pollDeadlineMs !== undefined) raw.engine.poll = { ...raw.engine.poll, deadlineMs: patch.pollDeadlineMs };
      raw.ui ??= {};
      if (patch.confirmAbove !== undefined) raw.ui.confirmAbove = patch.confirmAbove;
      if (patch.keepAwake !== undefined) raw.ui.keepAwake = patch.keepAwake;
      if (patch.budgetUsesForecast !== undefined) raw.budgetUsesForecast = patch.budgetUsesForecast;
      if (patch.checkUpdatesAtStart !== undefined) raw.updates = { ...raw.updates, checkAtStart: patch.checkUpdatesAtStart };
      if (patch.elevenlabsPlan !== undefined) applyCreditPlan(raw, patch.elevenlabsPlan);
    });
    // A key, and the plan credits are priced at, are used at once.
    if (patch.key || patch.elevenlabsPlan !== undefined) await ctx.deps.providers.reload(ctx.studio.settings);
    return getSettings(ctx);
  });
}
