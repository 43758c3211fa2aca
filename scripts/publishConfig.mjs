// electron-builder's configuration for `npm run dist`: electron-builder.yml with the generic update feed a
// release builder names in STUDIO_UPDATE_URL put before its GitHub releases. dist names this file in its
// build options as `config.extends`, which electron-builder takes as the configuration file's path, with the
// options beside it merged over what it returns (app-builder-lib out/packager.js validateConfig).
//
// The order matters: electron-builder writes only the first publish entry into the app's app-update.yml,
// which is where the app looks for updates (electron-builder docs publish.md, "first item will be used as a
// default auto-update server"; app-builder-lib out/publish/PublishManager.js getAppUpdatePublishConfiguration).
// The feed cannot sit in the YAML as `url: ${env.STUDIO_UPDATE_URL}`: a macro naming an unset variable fails
// the whole build (app-builder-lib out/util/config/macroExpander.js, ERR_ELECTRON_BUILDER_ENV_NOT_DEFINED).
// Nor can a parent config add it: electron-builder appends a child's publish list after its parent's
// (out/util/config/config.js doMergeConfigs, deepAssign), which would put the feed second.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const LOOPBACK = ['127.0.0.1', 'localhost', '[::1]'];

/**
 * The publish entry of the feed in `env.STUDIO_UPDATE_URL`, or none when it is unset or empty. Only https: a
 * feed anyone on the way could answer would hand the app their own installer, with checksums to match.
 */
export function feedPublish(env) {
  const given = env.STUDIO_UPDATE_URL?.trim();
  if (!given) return [];
  const url = URL.canParse(given) ? new URL(given) : null;
  if (!url || !(url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.includes(url.hostname)))) {
    throw new Error(
      `STUDIO_UPDATE_URL must be the https:// address of the folder holding the latest*.yml files and the installers (http:// only on 127.0.0.1 or localhost, for a test), not "${given}"`,
    );
  }
  return [{ provider: 'generic', url: url.href }];
}

/** A configuration with the feed's entry before the ones it already has. */
function withFeed(config, env) {
  return { ...config, publish: [...feedPublish(env), ...(config.publish ?? [])] };
}

// electron-builder calls a configuration module's default export with its request, projectDir included
// (app-builder-lib out/util/config/load.js readConfig).
export default ({ projectDir }) => {
  const yaml = createRequire(import.meta.url)('js-yaml');
  return withFeed(yaml.load(readFileSync(join(projectDir, 'electron-builder.yml'), 'utf8')), process.env);
};
