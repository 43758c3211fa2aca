// What `npm run dist` says when a download electron-builder needs fails: which file, from where, and how to supply
// it without the network. electron-builder fetches Electron's zip and its own tools (AppImage's runtime, fpm,
// NSIS, the icon converter, 7-Zip...) through @electron/get, whose errors carry the URL they asked for
// (app-builder-lib out/util/electronGet.js downloadArtifactToFile; got's HTTPError and RequestError).
import { createHash } from 'node:crypto';
import { posix } from 'node:path';

const NETWORK_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ERR_NON_2XX_3XX_RESPONSE']);
const NETWORK_NAMES = new Set(['HTTPError', 'RequestError', 'TimeoutError', 'ReadError', 'MaxRedirectsError']);

/** The URL a failed download asked for, if the error says. */
function failedUrl(err) {
  const raw = err?.options?.url ?? err?.response?.url ?? /\bhttps?:\/\/\S+/.exec(String(err?.message ?? ''))?.[0];
  try {
    return raw ? new URL(String(raw)) : null;
  } catch {
    return null;
  }
}

function reasonOf(err) {
  const status = err?.response?.statusCode;
  if (status) return `HTTP ${status}`;
  return err?.code ?? String(err?.message ?? err).split('\n')[0];
}

/**
 * @electron/get's cache folder for a file: the SHA-256 of the URL of the folder the file was downloaded from
 * (@electron/get src/Cache.ts getCacheDirectory).
 */
export function electronCacheFolder(url) {
  return createHash('sha256').update(`${url.protocol}//${url.host}${posix.dirname(url.pathname)}`).digest('hex');
}

/**
 * The message for a failed download, or null when the error is no failed download.
 * @param {unknown} err what electron-builder (or its download function) threw
 * @param {{ electronVersion: string, platform: string, arch: string, electronCache: string, builderCache: string, join: (...parts: string[]) => string }} at
 *   electronCache: @electron/get's cache root for this run; builderCache: electron-builder's own cache folder
 */
export function downloadFailure(err, at) {
  const url = failedUrl(err);
  const networkError = NETWORK_CODES.has(err?.code) || NETWORK_NAMES.has(err?.name);
  if (!networkError) return null;
  const zip = `electron-v${at.electronVersion}-${at.platform}-${at.arch}.zip`;
  const again = 'Supply it in one of these ways, then run `npm run dist` again:';
  if (!url) {
    return [
      `A download the installers need failed (${reasonOf(err)}), and no address was given.`,
      'Connect to the network, or supply the files as `docs/releasing.md` ("Building offline") describes.',
    ].join('\n');
  }
  const file = posix.basename(url.pathname);
  if (file === zip || file.startsWith('SHASUMS256.txt')) {
    const folder = at.join(at.electronCache, electronCacheFolder(url));
    return [
      `Could not download Electron ${at.electronVersion} for ${at.platform}-${at.arch}: ${url.href} answered ${reasonOf(err)}.`,
      again,
      `  - npm run dist -- --electron-dist <${zip}, or a folder holding it>`,
      `  - ELECTRON_MIRROR=<a mirror holding v${at.electronVersion}/${zip}>`,
      `  - put ${zip} in ${folder} and Electron's SHASUMS256.txt for ${at.electronVersion} at ${at.join(at.electronCache, `SHASUMS256.txt-${at.electronVersion}`)} (Electron's download cache; electron_config_cache moves it)`,
    ].join('\n');
  }
  const release = posix.basename(posix.dirname(url.pathname));
  return [
    `Could not download electron-builder's tool ${release} (${file}): ${url.href} answered ${reasonOf(err)}.`,
    again,
    `  - ELECTRON_BUILDER_BINARIES_MIRROR=<a mirror of electron-builder-binaries' releases holding ${release}/${file}>`,
    `  - put ${file} at ${at.join(at.builderCache, release, file)} (electron-builder's cache; ELECTRON_BUILDER_CACHE moves it)`,
  ].join('\n');
}
