import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** The folder name of the per-user data; the desktop app points Electron's userData at the same place. */
export const APP_FOLDER = 'take-studio';

/** The per-user data folder, as Electron's userData would place it; STUDIO_DATA_DIR overrides. */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  // Resolved, so a relative folder names the same place for every part of the studio (Electron's setPath
  // refuses a relative path).
  if (env.STUDIO_DATA_DIR) return resolve(env.STUDIO_DATA_DIR);
  const home = homedir();
  if (platform === 'win32') return join(env.APPDATA ?? join(home, 'AppData', 'Roaming'), APP_FOLDER);
  if (platform === 'darwin') return join(home, 'Library', 'Application Support', APP_FOLDER);
  return join(env.XDG_CONFIG_HOME ?? join(home, '.config'), APP_FOLDER);
}

export const databasePath = (dataDir: string): string => join(dataDir, 'studio.db');
export const settingsPath = (dataDir: string): string => join(dataDir, 'settings.json');
