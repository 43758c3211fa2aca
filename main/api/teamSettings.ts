import { updateSettings } from '../config/settings.ts';
import { mediaDirProblem } from '../config/media.ts';
import { databaseUrlProblem, machineNameProblem } from '../config/team.ts';
import { redactUrl } from '../store/postgres/address.ts';
import type { Studio } from '../studio.ts';
import type { TeamChange, TeamView } from './contract.ts';
import { PatchRefused } from './settingsPatch.ts';

/** Team mode as the Settings page shows it: passwords never leave the engine. */
export function teamView(studio: Studio, env: NodeJS.ProcessEnv = process.env): TeamView {
  const saved = studio.settings.team;
  return {
    store: { kind: studio.store.kind === 'postgres' ? 'team' : 'embedded', where: studio.store.where },
    storeFrom: studio.storeFrom,
    databaseUrl: saved.databaseUrl ? redactUrl(saved.databaseUrl) : null,
    machineName: studio.machine,
    savedMachineName: saved.machineName ?? null,
    machineNameFromEnvironment: Boolean(env.STUDIO_MACHINE_NAME),
    mediaDir: studio.media.shared ? studio.media.root : null,
    savedMediaDir: saved.mediaDir ?? null,
  };
}

/** Checks a team change as it comes over the API, both fields before either is written. */
export function checkTeamChange(value: unknown): TeamChange {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new PatchRefused('a team change must be an object like {"databaseUrl": "postgres://…", "machineName": "studio-laptop"}');
  const change = value as Record<string, unknown>;
  for (const key of Object.keys(change)) {
    if (key !== 'databaseUrl' && key !== 'machineName' && key !== 'mediaDir') throw new PatchRefused(`a team change has no field "${key}"; it takes databaseUrl, machineName and mediaDir`);
  }
  const { databaseUrl, machineName, mediaDir } = change;
  if (databaseUrl !== undefined && databaseUrl !== null) {
    const problem = typeof databaseUrl === 'string' ? databaseUrlProblem(databaseUrl.trim()) : 'the team database is an address like postgres://user:password@host:5432/studio';
    if (problem) throw new PatchRefused(problem);
  }
  if (machineName !== undefined && machineName !== null) {
    const problem = typeof machineName === 'string' ? machineNameProblem(machineName.trim()) : 'the machine name is text, like studio-laptop';
    if (problem) throw new PatchRefused(problem);
  }
  if (mediaDir !== undefined && mediaDir !== null) {
    const problem = mediaDirProblem(typeof mediaDir === 'string' ? mediaDir.trim() : mediaDir);
    if (problem) throw new PatchRefused(problem);
  }
  return change as TeamChange;
}

/** Writes a checked change to settings.json on this machine; the running studio keeps its store until it restarts. */
export function saveTeam(studio: Studio, change: TeamChange): void {
  studio.settings = updateSettings(studio.dataDir, (raw) => {
    const team: Record<string, unknown> = { ...raw.team };
    if (change.databaseUrl !== undefined) team.databaseUrl = change.databaseUrl?.trim() || undefined;
    if (change.machineName !== undefined) team.machineName = change.machineName?.trim() || undefined;
    if (change.mediaDir !== undefined) team.mediaDir = change.mediaDir?.trim() || undefined;
    raw.team = Object.values(team).some((v) => v !== undefined) ? team : undefined;
  });
}
